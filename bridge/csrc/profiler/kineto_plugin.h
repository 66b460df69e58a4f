// Whether this build of the bridge holds tessera's Kineto plugin
// (kineto_plugin.cc): only torch versions with PrivateUse1ProfilerRegistry
// (torch 2.13; not 2.11) let torch.profiler report tessera device time.
#pragma once

namespace torch_tessera {

bool kineto_plugin_built();

}  // namespace torch_tessera
