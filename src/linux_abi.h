// Kernel interfaces newer than the oldest headers the addon builds against
// (glibc 2.28-era sysroots): system call numbers and argument structs of
// openat2(2) (Linux 5.6) and cachestat(2) (Linux 6.5), as <linux/openat2.h> and
// <linux/mman.h> define them.
#pragma once

#include <sys/syscall.h>

#include <cstdint>

#ifndef __NR_openat2
#define __NR_openat2 437  // the same number on every architecture that has it
#endif
#ifndef __NR_cachestat
#define __NR_cachestat 451  // the same number on every architecture that has it
#endif

namespace zcopy {

// struct open_how
struct OpenHow {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};
constexpr uint64_t kResolveNoMagiclinks = 0x02;
constexpr uint64_t kResolveBeneath = 0x08;

// struct cachestat_range and struct cachestat
struct CachestatRange {
  uint64_t off;
  uint64_t len;
};
struct Cachestat {
  uint64_t nr_cache;
  uint64_t nr_dirty;
  uint64_t nr_writeback;
  uint64_t nr_evicted;
  uint64_t nr_recently_evicted;
};

}  // namespace zcopy
