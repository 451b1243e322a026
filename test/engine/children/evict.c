/*
 * evict FILE: drops FILE's pages from the page cache (written back first, then
 * posix_fadvise POSIX_FADV_DONTNEED) and prints how many of them are still
 * resident (mincore). For cold-cache.test.mjs; exits 1 on any error.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 2) return 1;
  int fd = open(argv[1], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) return 1;
  if (fdatasync(fd) != 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) return 1;
  long page = sysconf(_SC_PAGESIZE);
  size_t pages = (size_t)((st.st_size + page - 1) / page);
  void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
  unsigned char *resident = malloc(pages);
  if (map == MAP_FAILED || resident == NULL || mincore(map, (size_t)st.st_size, resident) != 0) return 1;
  size_t count = 0;
  for (size_t i = 0; i < pages; i++) count += resident[i] & 1;
  printf("%zu\n", count);
  return 0;
}
