// SPDX-License-Identifier: MIT
/* The empty DPU program of the launch-overhead benchmark. */
int main(void)
{
	return 0;
}
