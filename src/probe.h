// probeKernel(scratchDir) → { [feature]: { present, code } }: which of the kernel
// features zcopy relies on this kernel (and its seccomp profile) provides. For
// `zcopy doctor`; runs a handful of harmless syscalls on the calling thread.
#pragma once

#include <napi.h>

namespace zcopy {

Napi::Function ProbeKernelFunction(Napi::Env env);

}  // namespace zcopy
