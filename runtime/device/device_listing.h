// Which device types the layers that pick devices on their own (the
// bridge's default tessera:N list) include. Every type is listed unless
// its library says otherwise as it registers. The template device
// (devices/template), made for developing Tessera rather than for running
// models, says so: it is used only where it is named, as in
// TESSERA_VISIBLE_DEVICES=template. C++ programs that name devices
// themselves (tests, benchmarks) are not affected.
#pragma once

#include <string_view>

namespace tessera {

// For a device library's static initializer, beside TESSERA_REGISTER_DEVICE.
void set_listed_by_default(std::string_view type_name, bool listed);

// True unless set_listed_by_default(type_name, false) was called.
bool listed_by_default(std::string_view type_name);

}  // namespace tessera
