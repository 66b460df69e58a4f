"""Hugging Face models of many architectures, built from small configs (no
download), with a batch each that makes the model compute its own loss.

The configs keep each model's structure (layer kinds, attention variant,
normalization, embedding ties, shared layers) and shrink its sizes, so a
forward and backward take milliseconds. Dropout, layer drop and
SpecAugment masking are off (``build``), so that two devices compute the
same function.
"""

import torch
import transformers as T

T.logging.set_verbosity_error()

VOCAB = 97
# A transformer body small enough for milliseconds, large enough for 4 heads.
BODY = dict(hidden_size=32, num_attention_heads=4, intermediate_size=48, num_hidden_layers=2)


def _generator(seed):
    return torch.Generator().manual_seed(seed)


def _tokens(batch, length, seed=1):
    return torch.randint(0, VOCAB, (batch, length), generator=_generator(seed))


def _images(size):
    return torch.randn(2, 3, size, size, generator=_generator(3))


def _language_model(model_class, config_class, **config):
    return (lambda: model_class(config_class(vocab_size=VOCAB, **config)),
            lambda: {"input_ids": _tokens(2, 12), "labels": _tokens(2, 12)})


def _seq2seq(model_class, config):
    return (lambda: model_class(config()),
            lambda: {"input_ids": _tokens(2, 12), "labels": _tokens(2, 7, seed=2)})


def _classifier(model_class, config_class, size=32, **config):
    return (lambda: model_class(config_class(num_labels=5, **config)),
            lambda: {"pixel_values": _images(size), "labels": torch.tensor([1, 3])})


def _sequence_classifier(model_class, config):
    return (lambda: model_class(config()),
            lambda: {"input_ids": _tokens(2, 12) + 2, "labels": torch.tensor([0, 2])})


MODELS = {
    # Encoders.
    "bert": _language_model(T.BertForMaskedLM, T.BertConfig, **BODY),
    "roberta": _sequence_classifier(T.RobertaForSequenceClassification,
                                    lambda: T.RobertaConfig(vocab_size=VOCAB, num_labels=3, **BODY)),
    "distilbert": _sequence_classifier(
        T.DistilBertForSequenceClassification,
        lambda: T.DistilBertConfig(vocab_size=VOCAB, dim=32, n_heads=4, hidden_dim=48, n_layers=2,
                                   num_labels=3)),
    "albert": _language_model(T.AlbertForMaskedLM, T.AlbertConfig, embedding_size=16, **BODY),
    "electra": (lambda: T.ElectraForPreTraining(T.ElectraConfig(vocab_size=VOCAB, embedding_size=16,
                                                                **BODY)),
                lambda: {"input_ids": _tokens(2, 12),
                         "labels": torch.randint(0, 2, (2, 12), generator=_generator(2))}),
    "deberta_v2": _language_model(T.DebertaV2ForMaskedLM, T.DebertaV2Config, **BODY),
    # Decoders.
    "gpt2": _language_model(T.GPT2LMHeadModel, T.GPT2Config, n_embd=32, n_head=4, n_layer=2,
                       n_positions=32),
    "gpt_neox": _language_model(T.GPTNeoXForCausalLM, T.GPTNeoXConfig, **BODY),
    "gptj": _language_model(T.GPTJForCausalLM, T.GPTJConfig, n_embd=32, n_head=4, n_layer=2, rotary_dim=4,
                       n_positions=32),
    "llama": _language_model(T.LlamaForCausalLM, T.LlamaConfig, num_key_value_heads=2, **BODY),
    "mistral": _language_model(T.MistralForCausalLM, T.MistralConfig, num_key_value_heads=2,
                          sliding_window=8, **BODY),
    "mixtral": _language_model(T.MixtralForCausalLM, T.MixtralConfig, num_key_value_heads=2,
                          num_local_experts=4, num_experts_per_tok=2, **BODY),
    "qwen2": _language_model(T.Qwen2ForCausalLM, T.Qwen2Config, num_key_value_heads=2, **BODY),
    "phi": _language_model(T.PhiForCausalLM, T.PhiConfig, **BODY),
    "gemma": _language_model(T.GemmaForCausalLM, T.GemmaConfig, num_key_value_heads=2, head_dim=8,
                        **BODY),
    "opt": _language_model(T.OPTForCausalLM, T.OPTConfig, hidden_size=32, num_attention_heads=4,
                      ffn_dim=48, num_hidden_layers=2, word_embed_proj_dim=32),
    "bloom": _language_model(T.BloomForCausalLM, T.BloomConfig, hidden_size=32, n_head=4, n_layer=2),
    "falcon": _language_model(T.FalconForCausalLM, T.FalconConfig, hidden_size=32, num_attention_heads=4,
                         num_hidden_layers=2),
    # Encoder-decoders.
    "t5": _seq2seq(T.T5ForConditionalGeneration,
                   lambda: T.T5Config(vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=48, num_layers=2,
                                      num_heads=4, decoder_start_token_id=0)),
    "bart": _seq2seq(T.BartForConditionalGeneration,
                     lambda: T.BartConfig(vocab_size=VOCAB, d_model=32, encoder_layers=2,
                                          decoder_layers=2, encoder_attention_heads=4,
                                          decoder_attention_heads=4, encoder_ffn_dim=48,
                                          decoder_ffn_dim=48)),
    # Vision.
    "vit": _classifier(T.ViTForImageClassification, T.ViTConfig, image_size=32, patch_size=8,
                       **BODY),
    "deit": _classifier(T.DeiTForImageClassification, T.DeiTConfig, image_size=32, patch_size=8,
                        **BODY),
    "beit": _classifier(T.BeitForImageClassification, T.BeitConfig, image_size=32, patch_size=8,
                        use_relative_position_bias=True, **BODY),
    "dinov2": _classifier(T.Dinov2ForImageClassification, T.Dinov2Config, image_size=32,
                          patch_size=8, **BODY),
    "swin": _classifier(T.SwinForImageClassification, T.SwinConfig, image_size=32, patch_size=4,
                        embed_dim=8, depths=[1, 1], num_heads=[1, 2], window_size=4),
    "convnext": _classifier(T.ConvNextForImageClassification, T.ConvNextConfig, depths=[1, 1],
                            hidden_sizes=[8, 16], num_stages=2),
    "resnet": _classifier(T.ResNetForImageClassification, T.ResNetConfig, depths=[1, 1],
                          hidden_sizes=[8, 16], embedding_size=8),
    # 64 pixels: at 32 the last stage is 1x1, and batch norm over two values
    # per channel makes the gradients ill-conditioned on any device.
    "mobilenet_v2": _classifier(T.MobileNetV2ForImageClassification, T.MobileNetV2Config, size=64,
                                image_size=64, depth_multiplier=0.25),
    "mobilevit": _classifier(T.MobileViTForImageClassification, T.MobileViTConfig, size=64,
                             image_size=64, hidden_sizes=[16, 24, 32],
                             neck_hidden_sizes=[8, 8, 16, 16, 24, 24, 32]),
    "efficientnet": _classifier(T.EfficientNetForImageClassification, T.EfficientNetConfig,
                                image_size=32, width_coefficient=0.25, depth_coefficient=0.25,
                                hidden_dim=320),
    "segformer": (lambda: T.SegformerForSemanticSegmentation(T.SegformerConfig(
        num_labels=4, num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[8, 16],
        num_attention_heads=[1, 2], decoder_hidden_size=16, patch_sizes=[7, 3], strides=[4, 2])),
                  lambda: {"pixel_values": _images(32),
                           "labels": torch.randint(0, 4, (2, 32, 32), generator=_generator(4))}),
    # Audio.
    "wav2vec2": (lambda: T.Wav2Vec2ForSequenceClassification(T.Wav2Vec2Config(
        vocab_size=VOCAB, num_labels=3, conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3),
        num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4, **BODY)),
                 lambda: {"input_values": torch.randn(2, 800, generator=_generator(5)),
                          "labels": torch.tensor([0, 2])}),
    "whisper": (lambda: T.WhisperForConditionalGeneration(T.WhisperConfig(
        vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=2,
        encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=48,
        decoder_ffn_dim=48, num_mel_bins=16, max_source_positions=20, max_target_positions=32,
        decoder_start_token_id=1, pad_token_id=0)),
                lambda: {"input_features": torch.randn(2, 16, 40, generator=_generator(6)),
                         "labels": _tokens(2, 7, seed=2)}),
    # Vision and text.
    "clip": (lambda: T.CLIPModel(T.CLIPConfig(text_config=dict(vocab_size=VOCAB, **BODY),
                                              vision_config=dict(image_size=32, patch_size=8, **BODY),
                                              projection_dim=16)),
             lambda: {"input_ids": _tokens(2, 9), "pixel_values": _images(32),
                      "return_loss": True}),
}

# Config fields that make training random: zeroed.
_RANDOM_FIELDS = ("mask_time_prob", "mask_feature_prob")


def _without_randomness(config):
    for key, value in config.to_dict().items():
        if isinstance(value, float) and ("drop" in key or key in _RANDOM_FIELDS):
            setattr(config, key, 0.0)
        sub = getattr(config, key, None)
        if isinstance(value, dict) and hasattr(sub, "to_dict"):
            _without_randomness(sub)


def build(name):
    """(model in training mode, batch) for MODELS[name], with seeded weights
    and no dropout, layer drop or masking."""
    make_model, make_batch = MODELS[name]
    model = make_model()
    _without_randomness(model.config)
    torch.manual_seed(0)
    model = type(model)(model.config)  # the modules read the config when built
    return model.train(), make_batch()
