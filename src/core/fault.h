// Fault injection for GPU paths, so fallback code runs on any machine:
//   KILN_FAULT=alloc:N     the N-th GPU buffer allocation fails (OutOfMemory)
//   KILN_FAULT=kernel:N    the N-th kernel launch fails (DeviceError)
//   KILN_FAULT=device_lost every GPU call from the first launch on fails (DeviceError)
//   KILN_FAULT=provider:N  the N-th model run on an ONNX Runtime execution provider fails (DeviceError)
//   KILN_FAULT=provider_oom:N  the N-th model run runs out of memory (OutOfMemory: the batch is halved)
//   KILN_FAULT=decoder_full:N  the N-th video packet sent is answered "full, take frames first" (EAGAIN)
//   KILN_FAULT=device_map:N    the N-th step on a stream's probability map on the device fails (DeviceError)
//   KILN_FAULT=nvdec_refused:N the N-th video opened with --hw-decode auto decodes as though NVDEC had been set up
//                              and then could not start for the stream (its first frames come from software)
// Several may be combined with commas. Counting is per process.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/status.h"

namespace kiln {

enum class FaultSite : uint8_t { kAlloc = 0, kLaunch, kProvider, kProviderMemory, kDecoderFull, kDeviceMap,
                               kNvdecRefused };

// True when this call at `site` must fail. Cheap when KILN_FAULT is unset.
bool fault_should_fail(FaultSite site);
// Replaces the configuration (tests); an empty spec disables injection. InvalidArgument on a bad spec.
Status fault_configure(const std::string& spec);

}  // namespace kiln
