// SPDX-License-Identifier: MIT
/* libdpusim: rank discovery with libudev. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libudev.h>

#include "discovery.h"
#include "internal.h"

bool dpusim_parse_rank_name(const char *sysname, uint32_t *index)
{
	uint64_t v;

	if (!sysname || strncmp(sysname, "rank", 4) != 0)
		return false;
	/* no leading zeros except "rank0", so names map 1:1 to indexes */
	if (sysname[4] == '0' && sysname[5] != '\0')
		return false;
	if (dpusim_parse_u64(sysname + 4, SIZE_MAX, UINT32_MAX, &v))
		return false;
	*index = (uint32_t)v;
	return true;
}

/* Read an unsigned sysfs attribute; trailing newline allowed. */
static bool read_attr(struct udev_device *dev, const char *name,
		      uint64_t max, uint64_t *out)
{
	const char *s = udev_device_get_sysattr_value(dev, name);
	size_t len;

	if (!s)
		return false;
	len = strlen(s);
	while (len && (s[len - 1] == '\n' || s[len - 1] == ' '))
		len--;
	return dpusim_parse_u64(s, len, max, out) == 0;
}

static void read_desc(struct udev_device *dev, struct dpusim_rank_desc *d)
{
	const char *node = udev_device_get_devnode(dev);
	uint64_t v;

	if (node)
		snprintf(d->devnode, sizeof(d->devnode), "%s", node);
	else	/* no DEVNAME in uevent: the module's documented name */
		snprintf(d->devnode, sizeof(d->devnode), "/dev/dpusim/rank%u",
			 d->index);

	if (read_attr(dev, "nr_dpus", UINT32_MAX, &v)) {
		d->nr_dpus = (uint32_t)v;
		d->valid |= DPUSIM_ATTR_NR_DPUS;
	}
	if (read_attr(dev, "mram_size", UINT64_MAX, &v)) {
		d->mram_size = v;
		d->valid |= DPUSIM_ATTR_MRAM_SIZE;
	}
	if (read_attr(dev, "wram_size", UINT32_MAX, &v)) {
		d->wram_size = (uint32_t)v;
		d->valid |= DPUSIM_ATTR_WRAM_SIZE;
	}
	if (read_attr(dev, "is_owned", 1, &v)) {
		d->is_owned = v != 0;
		d->valid |= DPUSIM_ATTR_IS_OWNED;
	}
	if (read_attr(dev, "owner_pid", UINT32_MAX, &v)) {
		d->owner_pid = (uint32_t)v;
		d->valid |= DPUSIM_ATTR_OWNER_PID;
	}
	if (read_attr(dev, "mram_resident_bytes", UINT64_MAX, &v)) {
		d->mram_resident_bytes = v;
		d->valid |= DPUSIM_ATTR_MRAM_RESIDENT;
	}
	if (read_attr(dev, "wram_resident_bytes", UINT64_MAX, &v)) {
		d->wram_resident_bytes = v;
		d->valid |= DPUSIM_ATTR_WRAM_RESIDENT;
	}
	if (read_attr(dev, "pinned_pages", UINT64_MAX, &v)) {
		d->pinned_pages = v;
		d->valid |= DPUSIM_ATTR_PINNED;
	}
	if (read_attr(dev, "async_jobs", UINT64_MAX, &d->async_jobs) &&
	    read_attr(dev, "async_blocks", UINT64_MAX, &d->async_blocks) &&
	    read_attr(dev, "async_bytes", UINT64_MAX, &d->async_bytes) &&
	    read_attr(dev, "async_pages", UINT64_MAX, &d->async_pages))
		d->valid |= DPUSIM_ATTR_ASYNC;
}

static int cmp_desc(const void *a, const void *b)
{
	const struct dpusim_rank_desc *x = a, *y = b;

	return x->index < y->index ? -1 : x->index > y->index;
}

dpu_error_t dpusim_discover(struct dpusim_rank_desc **ranks, uint32_t *count,
			    char *errbuf, size_t errlen)
{
	struct dpusim_rank_desc *list = NULL;
	struct udev_enumerate *en = NULL;
	struct udev_list_entry *e;
	struct udev *udev;
	uint32_t n = 0, cap = 0;
	dpu_error_t ret = DPU_OK;
	int r;

	*ranks = NULL;
	*count = 0;
	if (errbuf && errlen)
		errbuf[0] = '\0';

	udev = udev_new();
	if (!udev) {
		snprintf(errbuf, errlen, "udev_new failed");
		return DPU_ERR_SYSTEM;
	}
	en = udev_enumerate_new(udev);
	if (!en) {
		snprintf(errbuf, errlen, "udev_enumerate_new failed");
		ret = DPU_ERR_SYSTEM;
		goto out;
	}
	r = udev_enumerate_add_match_subsystem(en, "dpusim");
	if (r >= 0)
		r = udev_enumerate_scan_devices(en);
	if (r < 0) {
		char eb[128];

		snprintf(errbuf, errlen, "scanning sysfs class dpusim: %s",
			 dpusim_strerror(-r, eb, sizeof(eb)));
		ret = DPU_ERR_SYSTEM;
		goto out;
	}

	udev_list_entry_foreach(e, udev_enumerate_get_list_entry(en)) {
		const char *path = udev_list_entry_get_name(e);
		struct udev_device *dev;
		uint32_t index;

		dev = udev_device_new_from_syspath(udev, path);
		if (!dev)	/* vanished meanwhile */
			continue;
		if (!dpusim_parse_rank_name(udev_device_get_sysname(dev),
					    &index)) {
			udev_device_unref(dev);	/* not a rank (e.g. tm) */
			continue;
		}
		if (n == cap) {
			uint32_t ncap = cap ? cap * 2 : 8;
			struct dpusim_rank_desc *nl;

			nl = realloc(list, ncap * sizeof(*nl));
			if (!nl) {
				udev_device_unref(dev);
				snprintf(errbuf, errlen, "out of memory");
				ret = DPU_ERR_SYSTEM;
				goto out;
			}
			list = nl;
			cap = ncap;
		}
		memset(&list[n], 0, sizeof(list[n]));
		list[n].index = index;
		read_desc(dev, &list[n]);
		n++;
		udev_device_unref(dev);
	}

	if (n)
		qsort(list, n, sizeof(*list), cmp_desc);
	*ranks = list;
	*count = n;
	list = NULL;
out:
	free(list);
	if (en)
		udev_enumerate_unref(en);
	udev_unref(udev);
	return ret;
}

const char *const dpusim_tm_stat_names[DPUSIM_TM_NR_STATS] = {
	"contexts", "mrs", "pinned_pages",
	"messages", "matches", "unexpected", "syncs", "rndv_reads", "bytes",
	"no_tag", "fins", "overruns",
};

dpu_error_t dpusim_discover_tm(struct dpusim_tm_desc *tm, bool *found,
			       char *errbuf, size_t errlen)
{
	struct udev_device *dev;
	struct udev *udev;
	const char *node;
	unsigned int i;

	memset(tm, 0, sizeof(*tm));
	*found = false;
	if (errbuf && errlen)
		errbuf[0] = '\0';
	udev = udev_new();
	if (!udev) {
		snprintf(errbuf, errlen, "udev_new failed");
		return DPU_ERR_SYSTEM;
	}
	dev = udev_device_new_from_subsystem_sysname(udev, "dpusim", "tm");
	if (!dev) {		/* no module, or a module without the device */
		udev_unref(udev);
		return DPU_OK;
	}
	node = udev_device_get_devnode(dev);
	snprintf(tm->devnode, sizeof(tm->devnode), "%s",
		 node ? node : "/dev/dpusim/tm");
	for (i = 0; i < DPUSIM_TM_NR_STATS; i++)
		if (read_attr(dev, dpusim_tm_stat_names[i], UINT64_MAX,
			      &tm->stats[i]))
			tm->valid |= 1U << i;
	*found = true;
	udev_device_unref(dev);
	udev_unref(udev);
	return DPU_OK;
}
