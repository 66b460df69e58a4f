"""Parameters shared between submodules stay shared across device moves.

Module._apply (``model.to("tessera")``, ``model.cpu()``, ``to_empty``) keeps
each Parameter object, and with it every tie between submodules, only when
``torch._has_compatible_shallow_copy_type(old, new)`` is true; otherwise it
makes a new Parameter per submodule and a tied weight trains as two. These
tests use the models where ties matter in practice: Hugging Face GPT-2
(input embedding tied to the output projection) and T5 (one embedding
shared by encoder, decoder and output projection), built from small
configs, trained on every tessera device next to the CPU.
"""

import copy

import pytest
import torch
import torch.nn as nn
import transformers

from bridge_testing import every_device

RTOL = 1e-4
ATOL = 1e-5
# Adam scales each update to about lr (3e-3) whatever the gradient's size,
# so a weight whose gradient is a few ulps from zero may move differently
# by a fraction of lr; 1e-4 is 3% of one step.
PARAM_ATOL = 1e-4


def shared_parameter_groups(model):
    """Sets of names that refer to one Parameter object, for Parameters
    that more than one name refers to."""
    names = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        names.setdefault(id(p), set()).add(name)
    return sorted((frozenset(group) for group in names.values() if len(group) > 1), key=sorted)


def assert_same_ties(moved, original, device):
    assert shared_parameter_groups(moved) == shared_parameter_groups(original)
    assert len(list(moved.parameters())) == len(list(original.parameters()))
    for name, p in moved.named_parameters():
        assert p.device == device, name
        assert isinstance(p, nn.Parameter), name


class TiedEmbedding(nn.Module):
    """An embedding whose weight is also the output projection, as in a language model."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.head = nn.Linear(4, 10, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, tokens):
        return self.head(self.embed(tokens))


@every_device
def test_compatible_shallow_copy_type_between_cpu_and_tessera(device):
    cpu = torch.ones(3)
    dev = torch.ones(3, device=device)
    assert torch._has_compatible_shallow_copy_type(cpu, dev)
    assert torch._has_compatible_shallow_copy_type(dev, cpu)
    assert torch._has_compatible_shallow_copy_type(dev, torch.zeros(2, 2, device=device))
    # A sparse tensor cannot take a dense one's place, on any device.
    sparse = torch.eye(3).to_sparse()
    assert not torch._has_compatible_shallow_copy_type(sparse, dev)
    assert not torch._has_compatible_shallow_copy_type(dev, sparse)


@every_device
def test_assigning_data_across_devices_keeps_the_parameter(device):
    p = nn.Parameter(torch.arange(4.0))
    before = id(p)
    p.data = p.data.to(device)
    assert id(p) == before and p.device == device and p.requires_grad
    (p * 2).sum().backward()
    assert p.grad.device == device
    torch.testing.assert_close(p.grad.cpu(), torch.full((4,), 2.0))
    p.data = p.data.cpu()
    assert p.device.type == "cpu"


@every_device
def test_to_keeps_ties_and_grads_of_a_hand_built_module(device):
    model = TiedEmbedding()
    model(torch.tensor([1, 2, 3])).sum().backward()
    grad = model.embed.weight.grad.clone()

    model.to(device)
    assert model.head.weight is model.embed.weight
    assert model.embed.weight.device == device
    assert model.embed.weight.grad.device == device
    torch.testing.assert_close(model.embed.weight.grad.cpu(), grad)
    assert len(list(model.parameters())) == 1

    model.cpu()
    assert model.head.weight is model.embed.weight
    assert model.embed.weight.device.type == "cpu"

    empty = TiedEmbedding().to_empty(device=device)
    assert empty.head.weight is empty.embed.weight and empty.embed.weight.device == device


def tiny_gpt2():
    config = transformers.GPT2Config(vocab_size=97, n_positions=32, n_embd=32, n_layer=2, n_head=4,
                                     tie_word_embeddings=True, resid_pdrop=0.0, embd_pdrop=0.0,
                                     attn_pdrop=0.0)
    return transformers.GPT2LMHeadModel(config)


def tiny_t5():
    config = transformers.T5Config(vocab_size=97, d_model=32, d_kv=8, d_ff=64, num_layers=2,
                                   num_decoder_layers=2, num_heads=4, dropout_rate=0.0,
                                   tie_word_embeddings=True, decoder_start_token_id=0)
    return transformers.T5ForConditionalGeneration(config)


# One batch, seen on every step: the loss must fall as the model learns it.
def gpt2_batch(gen):
    return {"input_ids": torch.randint(0, 97, (2, 16), generator=gen)}


def t5_batch(gen):
    return {"input_ids": torch.randint(1, 97, (2, 12), generator=gen),
            "labels": torch.randint(1, 97, (2, 8), generator=gen)}


def lm_loss(model, batch, device):
    inputs = {k: v.to(device) for k, v in batch.items()}
    inputs.setdefault("labels", inputs["input_ids"])
    return model(**inputs).loss


def train(model, batches, device):
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    for batch in batches:
        optimizer.zero_grad()
        loss = lm_loss(model, batch, device)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach().cpu())
    return torch.stack(losses)


MODELS = {
    # The output projection (lm_head) is the input embedding (wte).
    "gpt2": (tiny_gpt2, gpt2_batch, {frozenset({"lm_head.weight", "transformer.wte.weight"})}),
    # One embedding serves encoder, decoder and the output projection.
    "t5": (tiny_t5, t5_batch, {frozenset({"shared.weight", "encoder.embed_tokens.weight",
                                            "decoder.embed_tokens.weight", "lm_head.weight"})}),
}


@every_device
@pytest.mark.parametrize("name", MODELS.keys())
def test_tied_language_model_trains_as_on_cpu(device, name):
    factory, make_batch, expected_ties = MODELS[name]
    torch.manual_seed(0)
    cpu_model = factory()
    assert set(shared_parameter_groups(cpu_model)) == expected_ties

    moved = copy.deepcopy(cpu_model).to(device)
    assert_same_ties(moved, cpu_model, device)

    batches = [make_batch(torch.Generator().manual_seed(1))] * 4
    cpu_losses = train(cpu_model, batches, "cpu")
    losses = train(moved, batches, device)
    assert cpu_losses[-1] < cpu_losses[0]
    torch.testing.assert_close(losses, cpu_losses, rtol=RTOL, atol=ATOL)

    # Still tied after the optimizer's updates, and equal to the CPU weights.
    assert_same_ties(moved, cpu_model, device)
    cpu_params = dict(cpu_model.named_parameters())
    for pname, p in moved.named_parameters():
        torch.testing.assert_close(p.detach().cpu(), cpu_params[pname].detach(), rtol=RTOL,
                                   atol=PARAM_ATOL, msg=lambda m, pname=pname: f"{name} {pname}: {m}")

    # And back to the CPU with the ties intact.
    moved.cpu()
    assert_same_ties(moved, cpu_model, torch.device("cpu"))
