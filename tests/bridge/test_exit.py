"""A script that ends right after a backward on tessera exits cleanly.

Autograd runs tessera's backward on its own device thread, which can still
be releasing the finished graph task when the script ends; without
torch_tessera's exit hook the process then aborts about one time in five.
"""

import subprocess
import sys

SCRIPT = """
import torch
x = torch.ones(3, device="tessera", requires_grad=True)
(x * 2).sum().backward()
"""


def test_exit_right_after_backward_is_clean(tessera):
    codes = [subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                            timeout=120).returncode for _ in range(8)]
    assert codes == [0] * 8
