/* Internal to the hardware descriptions: pieces of host detection that
 * tests drive with a fake sysfs tree.  Not installed. */
#ifndef TESSEL_SEARCH_TARGET_INTERNAL_H
#define TESSEL_SEARCH_TARGET_INTERNAL_H

#include <tessel/target.h>

/* Read the data and unified caches of levels 1 to 3, and the line size of
 * level 1, from the sysfs folder "dir" (./cpu0/cache, holding index0,
 * index1, ...) into "c"; "c->threads_per_core" must be set.  Return the
 * number of cache levels read. */
int ts_target_sysfs_caches(ts_target_cpu *c, const char *dir);

#endif
