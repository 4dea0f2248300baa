/* Built only with `pkg-config --cflags --libs dpusim` against an installed
 * copy: allocates every rank and prints how many it got. */
#include <dpu.h>
#include <stdio.h>

int main(void)
{
	struct dpu_set_t set;
	uint32_t nr_ranks, nr_dpus;

	DPU_ASSERT(dpu_alloc(DPU_ALLOCATE_ALL, NULL, &set));
	DPU_ASSERT(dpu_get_nr_ranks(set, &nr_ranks));
	DPU_ASSERT(dpu_get_nr_dpus(set, &nr_dpus));
	printf("allocated %u ranks, %u DPUs\n", nr_ranks, nr_dpus);
	DPU_ASSERT(dpu_free(set));
	return 0;
}
