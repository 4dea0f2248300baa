/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels dpusim builds on (Debian 12's 6.1 and
 * 6.12).  Kbuild passes DPUSIM_KVER = VERSION * 1000 + PATCHLEVEL of the
 * target tree, so no LINUX_VERSION_CODE test is needed here.
 */
#ifndef _DPUSIM_COMPAT_H
#define _DPUSIM_COMPAT_H

#include <linux/device.h>

/* 6.2 made the class devnode callback take a const device. */
#if DPUSIM_KVER >= 6002
#define dpusim_devnode_dev const struct device
#else
#define dpusim_devnode_dev struct device
#endif

/* 6.13 quoted the namespace argument of MODULE_IMPORT_NS(). */
#if DPUSIM_KVER >= 6013
#define DPUSIM_IMPORT_KUNIT_NS() MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING")
#else
#define DPUSIM_IMPORT_KUNIT_NS() MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING)
#endif

/* 6.12 moved the unaligned access helpers to <linux/unaligned.h>. */
#if DPUSIM_KVER >= 6012
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/* 6.3 made vma->vm_flags read-only: vm_flags_set() changes it. */
#include <linux/mm.h>
#if DPUSIM_KVER >= 6003
#define dpusim_vm_flags_set(vma, flags) vm_flags_set(vma, flags)
#define dpusim_vm_flags_clear(vma, flags) vm_flags_clear(vma, flags)
#else
#define dpusim_vm_flags_set(vma, flags) ((vma)->vm_flags |= (flags))
#define dpusim_vm_flags_clear(vma, flags) ((vma)->vm_flags &= ~(flags))
#endif

#endif /* _DPUSIM_COMPAT_H */
