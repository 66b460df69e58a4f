// The template device's kernels, and how they get to the stream.
//
// A kernel is called on the thread that called the op, with the op's
// arguments already validated, promoted and broadcast by the runtime's
// front end (runtime/ops/kernel_signatures.h says what each may assume).
// It then:
//  1. declines what it does not implement, by handing the call to
//     detail::run_kernel_on_host (runtime/ops/dispatch.h): the same counted
//     CPU fallback as an op without a kernel, for that op code or dtype
//     only. So a kernel can start with one dtype and grow;
//  2. checks what it needs, on the caller's thread, where an error can
//     still be raised;
//  3. captures the tensors' addresses and layouts (StridedView) and
//     launches a task on the stream, which the stream's worker runs later.
#pragma once

#include "devices/template/template_stream.h"
#include "runtime/ops/kernel_context.h"
#include "runtime/ops/kernel_registry.h"

namespace tessera::template_device {

// Every kernel of the device, registered for `type`.
void register_all_kernels(KernelRegistry& registry, DeviceType type);

// One registration per file (kernels/<name>.cc).
void register_fill_kernel(KernelRegistry& registry, DeviceType type);
void register_copy_kernel(KernelRegistry& registry, DeviceType type);
void register_binary_kernel(KernelRegistry& registry, DeviceType type);
void register_bmm_kernel(KernelRegistry& registry, DeviceType type);

// Enqueues `task` on the kernel's stream (ctx.stream of ctx.device); `op`
// names the kernel in errors.
void launch(const KernelContext& ctx, const char* op, TemplateStream::Task task);

}  // namespace tessera::template_device
