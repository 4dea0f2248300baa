// SPDX-License-Identifier: MIT
/* empty - returns at once (launch overhead). */
int main(void)
{
	return 0;
}
