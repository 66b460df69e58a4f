// The umbrella header of the Tessera runtime: everything a C++ application
// needs to create devices' tensors and run ops. Link //runtime plus the
// device libraries you want (e.g. //devices/cpu).
#pragma once

#include "runtime/alloc/caching_allocator.h"
#include "runtime/core/device.h"
#include "runtime/core/dtype.h"
#include "runtime/core/error.h"
#include "runtime/core/scalar.h"
#include "runtime/core/tensor.h"
#include "runtime/device/device_registry.h"
#include "runtime/io/safetensors.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/matmul_precision.h"
#include "runtime/ops/ops.h"
#include "runtime/random/generator.h"
#include "runtime/stream/event.h"
#include "runtime/stream/stream.h"
