// An allocator of plain malloc'd memory for the native lane's containers.
// std::allocator's allocate(n), as GCC 11 and later compile it, calls
// std::__throw_bad_array_new_length, a libstdc++ symbol of GLIBCXX_3.4.29:
// the prebuilt binaries must load with GCC 8's libstdc++ (scripts/elf.js's
// floor). Running out of memory aborts, as std::allocator's bad_alloc does
// under -fno-exceptions.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <limits>

namespace zcopy {

template <typename T>
struct PlainAllocator {
  using value_type = T;

  PlainAllocator() = default;
  template <typename U>
  PlainAllocator(const PlainAllocator<U>&) noexcept {}  // NOLINT: rebinding, as allocators do

  T* allocate(size_t n) {
    if (n > std::numeric_limits<size_t>::max() / sizeof(T)) std::abort();
    void* memory = std::malloc(n * sizeof(T));
    if (memory == nullptr) std::abort();
    return static_cast<T*>(memory);
  }

  void deallocate(T* memory, size_t) noexcept { std::free(memory); }
};

template <typename T, typename U>
bool operator==(const PlainAllocator<T>&, const PlainAllocator<U>&) {
  return true;
}

template <typename T, typename U>
bool operator!=(const PlainAllocator<T>&, const PlainAllocator<U>&) {
  return false;
}

}  // namespace zcopy
