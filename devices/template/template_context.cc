#include "devices/template/template_context.h"

#include <cstdio>
#include <vector>

#include "runtime/core/environment.h"
#include "runtime/core/error.h"
#include "runtime/device/device_selection.h"

namespace tessera::template_device {
namespace {

constexpr long kDefaultDeviceCount = 1;
constexpr long kMaxDeviceCount = 16;
constexpr long kDefaultMemoryMiB = 4096;
constexpr long kMaxMemoryMiB = long{1} << 20;  // 1 TiB

// The emulated driver: TESSERA_TEMPLATE_DEVICE_COUNT devices, of which
// TESSERA_TEMPLATE_DEVICES selects some (selected_devices, the same rule as
// every device type's TESSERA_<TYPE>_DEVICES). A vendor asks its driver
// for the count here instead, and reports 0 devices, never an error, on a
// machine without the hardware.
std::vector<std::unique_ptr<TemplateContext>> enumerate() {
  const long count = env_integer("TESSERA_TEMPLATE_DEVICE_COUNT", kDefaultDeviceCount, 0,
                                 kMaxDeviceCount);
  const long mib = env_integer("TESSERA_TEMPLATE_MEMORY_MIB", kDefaultMemoryMiB, 1, kMaxMemoryMiB);
  std::vector<std::unique_ptr<TemplateContext>> list;
  for (int ordinal : selected_devices("TESSERA_TEMPLATE_DEVICES", static_cast<int>(count))) {
    list.push_back(std::make_unique<TemplateContext>(static_cast<int>(list.size()), ordinal,
                                                     static_cast<size_t>(mib) << 20));
  }
  return list;
}

std::vector<std::unique_ptr<TemplateContext>>& contexts() {
  // Leaked on purpose (see the header): memory may be freed during exit.
  static auto* list = new std::vector<std::unique_ptr<TemplateContext>>(enumerate());
  return *list;
}

}  // namespace

TemplateContext::TemplateContext(int index, int ordinal, size_t memory_capacity)
    : index_(index), ordinal_(ordinal), memory_(memory_capacity) {}

std::string TemplateContext::stream_name(int id) const {
  return "template:" + std::to_string(index_) + " stream " + std::to_string(id);
}

TemplateStream& TemplateContext::default_stream() {
  std::call_once(default_once_,
                 [this] { default_stream_ = std::make_unique<TemplateStream>(stream_name(0)); });
  return *default_stream_;
}

TemplateStream* TemplateContext::create_stream() {
  std::lock_guard<std::mutex> lock(streams_mutex_);
  auto stream = std::make_shared<TemplateStream>(stream_name(next_stream_id_++));
  TemplateStream* handle = stream.get();
  streams_.emplace(handle, std::move(stream));
  return handle;
}

void TemplateContext::destroy_stream(TemplateStream* stream) {
  if (stream == &default_stream()) return;  // it lives as long as the process
  std::shared_ptr<TemplateStream> owned;
  {
    std::lock_guard<std::mutex> lock(streams_mutex_);
    const auto it = streams_.find(stream);
    TESSERA_CHECK(it != streams_.end(), DeviceError, "template destroy_stream: ", stream,
                  " is not a live stream of template:", index_);
    TESSERA_CHECK(!stream->on_worker_thread(), DeviceError, "template destroy_stream: ",
                  stream->name(), " was destroyed by one of its own tasks");
    owned = std::move(it->second);
    streams_.erase(it);
  }
  if (!owned->wait_idle(kWaitLimit)) {
    // Its worker may still be using memory and the stream object: keep
    // both rather than free them under it.
    std::fprintf(stderr, "tessera: %s did not finish its work within %lld s; leaking it\n",
                 owned->name().c_str(), static_cast<long long>(kWaitLimit.count()));
    std::lock_guard<std::mutex> lock(streams_mutex_);
    hung_streams_.push_back(std::move(owned));
  }
  // Otherwise the last reference (this one, or a waiter's below) stops the
  // worker, after the tasks still queued.
}

TemplateStream& TemplateContext::stream(NativeStream handle, const char* op) {
  TESSERA_CHECK(handle != nullptr, DeviceError, "template ", op, ": null stream handle");
  auto* stream = static_cast<TemplateStream*>(handle);
  if (stream == &default_stream()) return *stream;
  std::lock_guard<std::mutex> lock(streams_mutex_);
  TESSERA_CHECK(streams_.count(stream) == 1, DeviceError, "template ", op, ": ", handle,
                " is not a live stream of template:", index_);
  return *stream;
}

// The waits below work on a snapshot and hold no lock: other threads keep
// launching work meanwhile, and a stream destroyed during the wait lives
// until the snapshot lets it go.
std::vector<std::shared_ptr<TemplateStream>> TemplateContext::created_streams() const {
  std::lock_guard<std::mutex> lock(streams_mutex_);
  std::vector<std::shared_ptr<TemplateStream>> out;
  for (const auto& [raw, stream] : streams_) out.push_back(stream);
  return out;
}

void TemplateContext::synchronize_all(const char* op) {
  default_stream().synchronize(op);
  for (const auto& s : created_streams()) s->synchronize(op);
}

bool TemplateContext::wait_all_idle() {
  bool idle = default_stream().wait_idle(kWaitLimit);
  for (const auto& s : created_streams()) idle = s->wait_idle(kWaitLimit) && idle;
  return idle;
}

int device_count() { return static_cast<int>(contexts().size()); }

TemplateContext& context(int index, const char* op) {
  auto& list = contexts();
  TESSERA_CHECK(index >= 0 && static_cast<size_t>(index) < list.size(), ValueError, "template ",
                op, ": device template:", index, " does not exist (", list.size(),
                " template device", list.size() == 1 ? "" : "s", ")");
  return *list[static_cast<size_t>(index)];
}

}  // namespace tessera::template_device
