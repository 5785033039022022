#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/buffer_pool.h"
#include "kiln/device.h"

namespace kiln {

namespace {

// The stream of backends that run calls to completion on the calling thread: nothing to order or wait for.
class HostStream final : public Stream {
 public:
  explicit HostStream(Backend& backend) : m_backend(backend) {}
  Backend& backend() const override { return m_backend; }
  Status synchronize() override { return Status::ok(); }

 private:
  Backend& m_backend;
};

}  // namespace

Result<std::unique_ptr<Stream>> Backend::stream_create() { return std::unique_ptr<Stream>(std::make_unique<HostStream>(*this)); }

Result<PoolBlock> Backend::host_acquire(size_t bytes) {
  void* memory = std::malloc(bytes);
  if (memory == nullptr) return Status(Errc::kOutOfMemory, "host allocation of " + std::to_string(bytes) + " bytes failed");
  return PoolBlock{reinterpret_cast<uintptr_t>(memory), bytes};
}

void Backend::host_release(PoolBlock block) { std::free(reinterpret_cast<void*>(block.handle)); }

Result<PoolBlock> Backend::device_acquire(size_t /*bytes*/) {
  return Status(Errc::kNotImplemented, name() + ": no device memory addressed by pointer");
}

void Backend::device_release(PoolBlock /*block*/) {}

Status Backend::device_download(const void* /*device*/, void* /*host*/, size_t /*bytes*/) {
  return Status(Errc::kNotImplemented, name() + ": no device memory addressed by pointer");
}

Status Backend::device_upload(const void* /*host*/, void* /*device*/, size_t /*bytes*/) {
  return Status(Errc::kNotImplemented, name() + ": no device memory addressed by pointer");
}

Status Backend::images_upload(const VarShapeBatchView& /*host*/, const VarShapeBatchView& /*device*/) {
  return Status(Errc::kNotImplemented, name() + ": no device memory addressed by pointer");
}

Result<ForeignStream> Backend::foreign_stream_describe(void* /*native*/) {
  return Status(Errc::kNotImplemented, name() + ": no native streams");
}

void Backend::release_after_foreign_reads(const ForeignStream& /*stream*/, std::shared_ptr<const void> /*keep*/) {}

PoolStats Backend::memory_stats() const { return {}; }

PoolStats Backend::host_memory_stats() const { return {}; }

Result<BackendOptions> backend_options_from_env() {
  BackendOptions options;
  if (const char* id = std::getenv("GPU_DEVICE_ID"); id != nullptr && *id != '\0') {
    char* end = nullptr;
    const long value = std::strtol(id, &end, 10);
    if (*end != '\0' || value < 0) return invalid_argument("GPU_DEVICE_ID='" + std::string(id) + "': expected a device index");
    options.device_id = static_cast<int32_t>(value);
  }
  if (const char* gb = std::getenv("GPU_MEMORY_LIMIT_GB"); gb != nullptr && *gb != '\0') {
    char* end = nullptr;
    const double value = std::strtod(gb, &end);
    if (*end != '\0' || !(value > 0)) {
      return invalid_argument("GPU_MEMORY_LIMIT_GB='" + std::string(gb) + "': expected a positive number");
    }
    options.memory_limit_bytes = static_cast<uint64_t>(value * 1024.0 * 1024.0 * 1024.0);
  }
  const char* types = std::getenv("KILN_OPENCL_DEVICE_TYPE");
  const char* preferred = std::getenv("GPU_BACKEND");
  options.opencl_allow_cpu_devices = (types != nullptr && (std::strcmp(types, "all") == 0 || std::strcmp(types, "cpu") == 0)) ||
                                     (preferred != nullptr && std::strcmp(preferred, "opencl") == 0);
  return options;
}

Result<BackendOptions> BackendRegistry::options() const {
  if (!m_options_status.is_ok()) return m_options_status;
  return m_options;
}

void BackendRegistry::options_set(Result<BackendOptions> options) {
  m_options_status = options.status();
  m_options = options.is_ok() ? options.value() : BackendOptions{};
}

Backend* BackendRegistry::find(BackendKind kind) const {
  for (const auto& backend : m_backends) {
    if (backend->kind() == kind) return backend.get();
  }
  return nullptr;
}

const BackendStatus* BackendRegistry::status(BackendKind kind) const {
  for (const BackendStatus& s : m_statuses) {
    if (s.kind == kind) return &s;
  }
  return nullptr;
}

void BackendRegistry::add(std::unique_ptr<Backend> backend, BackendStatus status) {
  m_statuses.push_back(std::move(status));
  if (!backend) return;
  // Keep CPU last: GPU backends go in front of it, in the order they are added.
  auto cpu = std::find_if(m_backends.begin(), m_backends.end(),
                          [](const auto& b) { return b->kind() == BackendKind::kCpu; });
  if (backend->kind() != BackendKind::kCpu && cpu != m_backends.end()) {
    m_backends.insert(cpu, std::move(backend));
  } else {
    m_backends.push_back(std::move(backend));
  }
}

}  // namespace kiln
