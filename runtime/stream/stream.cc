#include "runtime/stream/stream.h"

#include <deque>
#include <mutex>
#include <unordered_map>

#include "runtime/core/error.h"
#include "runtime/device/device_registry.h"

namespace tessera {

namespace {

// Native handles of the streams created so far, per device. Index = id - 1.
// Streams live for the process, as in CUDA's pool: a Stream value never
// dangles.
struct StreamTable {
  std::mutex mutex;
  std::unordered_map<Device, std::deque<NativeStream>> created;

  NativeStream lookup(const Stream& s) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = created.find(s.device());
    TESSERA_CHECK(it != created.end() && s.id() <= it->second.size(), ValueError,
                  "unknown stream ", s.to_string());
    return it->second[s.id() - 1];
  }
};

StreamTable& stream_table() {
  static auto* t = new StreamTable();  // never destroyed: streams outlive statics
  return *t;
}

// The current stream of each device for this thread; absent means default.
thread_local std::unordered_map<Device, uint32_t> tls_current_streams;
// False until this thread sets a stream: then every device's current stream
// is its default, known without a hash lookup (every op asks, twice).
thread_local bool tls_streams_set = false;

}  // namespace

NativeStream Stream::native() const {
  DeviceInterface& iface = device_interface(device_);
  if (id_ == 0) return iface.default_stream(device_.index);
  return stream_table().lookup(*this);
}

bool Stream::query() const { return device_interface(device_).query_stream(device_.index, native()); }

void Stream::synchronize() const {
  device_interface(device_).synchronize_stream(device_.index, native());
}

std::string Stream::to_string() const {
  return "Stream(device=" + device_.to_string() + ", id=" + std::to_string(id_) + ")";
}

Stream Stream::default_stream(Device device) {
  device_interface(device);
  return Stream(device, 0);
}

Stream Stream::create(Device device) {
  NativeStream native = device_interface(device).create_stream(device.index);
  StreamTable& t = stream_table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto& list = t.created[device];
  list.push_back(native);
  return Stream(device, static_cast<uint32_t>(list.size()));
}

Stream current_stream(Device device) {
  if (!tls_streams_set) return Stream(device, 0);
  auto it = tls_current_streams.find(device);
  return Stream(device, it == tls_current_streams.end() ? 0 : it->second);
}

void set_current_stream(Stream stream) {
  stream.native();  // validates device and id
  tls_current_streams[stream.device()] = stream.id();
  tls_streams_set = true;
}

StreamGuard::StreamGuard(Stream stream) : previous_(current_stream(stream.device())) {
  set_current_stream(stream);
}

StreamGuard::~StreamGuard() { tls_current_streams[previous_.device()] = previous_.id(); }

void synchronize(Device device) { device_interface(device).synchronize_device(device.index); }

}  // namespace tessera
