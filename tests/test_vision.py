"""Tests for :mod:`lessons_code.vision`.

The Vision Transformer is checked against a reference written in this file
straight from the ViT paper's equations 1 to 4 (Dosovitskiy et al., 2021,
with the multi-head self-attention of its appendix A), in plain tensor
operations on the same weights. ``timm``'s ``VisionTransformer`` would be
the other reference, but timm (1.0.31) imports torchvision as it loads
(``timm.layers.create_norm``), and torchvision is a compiled companion of
one torch build: it would have to be pinned and installed beside
torch==2.13.0 the way every session installs torch, for one test.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from lessons_code.training import seeded
from lessons_code.vision import (
    MODEL_KINDS,
    TEST_SIZE,
    PatchEmbedding,
    PixelMLP,
    TinyCNN,
    VisionTransformer,
    attention_rollout,
    build_digit_model,
    evaluate,
    fit,
    load_digits_split,
    neighbour_chance,
    neighbour_fraction,
    parameter_count,
    patchify,
    position_similarity,
    random_shift,
    shuffle_patches,
    train_digit_model,
    unpatchify,
)

Randomize = Callable[..., nn.Module]
# The patch embedding against Conv2d: float64 holds to a few units in the
# last place of the largest output, float32 to PyTorch's default tolerance.
CONV_BOUND = {torch.float64: 1e-13, torch.float32: 1e-5}


def images_like(*shape: int, dtype: torch.dtype = torch.float32, seed: int = 0) -> torch.Tensor:
    return torch.rand(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


# -- the data ----------------------------------------------------------------


def test_the_split_is_fixed_stratified_and_complete() -> None:
    from sklearn.datasets import load_digits

    data, again = load_digits_split(), load_digits_split()
    assert torch.equal(data.test_images, again.test_images)
    np.testing.assert_array_equal(data.test_index, again.test_index)
    assert len(data.test_labels) == TEST_SIZE == 500
    assert len(data.train_labels) == 1297
    # every image once, in one split or the other
    rows = np.concatenate([data.train_index, data.test_index])
    np.testing.assert_array_equal(np.sort(rows), np.arange(1797))
    # the images and labels are the data set's, at those rows
    digits = load_digits()
    np.testing.assert_array_equal(data.test_labels.numpy(), digits.target[data.test_index])
    np.testing.assert_allclose(
        data.train_images[:, 0].numpy(), digits.images[data.train_index] / 16.0, rtol=1e-7
    )
    assert data.train_images.dtype == torch.float32
    assert data.train_labels.dtype == torch.int64
    assert data.train_images.shape[1:] == (1, 8, 8)
    assert float(data.train_images.min()) == 0.0
    assert float(data.train_images.max()) == 1.0
    # stratified: each digit's share of the test set within one image of its share of the data
    counts = np.bincount(digits.target)
    share = TEST_SIZE * counts / counts.sum()
    assert np.abs(data.test_labels.bincount().numpy() - share).max() < 1.0


def test_the_split_is_pinned() -> None:
    # a change of the split changes every number of the lesson
    data = load_digits_split()
    assert data.test_index[:8].tolist() == [1, 5, 6, 9, 12, 14, 15, 16]
    assert int(data.test_index.sum()) == 447_708


# -- patches ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "patch"), [((2, 1, 8, 8), 2), ((2, 1, 8, 8), 4), ((3, 3, 6, 9), 3)]
)
def test_patchify_reads_the_patches_in_reading_order(shape: tuple[int, ...], patch: int) -> None:
    images = images_like(*shape)
    N, C, H, W = shape
    patches = patchify(images, patch)
    rows, cols = H // patch, W // patch
    assert patches.shape == (N, rows * cols, C * patch * patch)
    for r in range(rows):
        for c in range(cols):
            window = images[:, :, r * patch : (r + 1) * patch, c * patch : (c + 1) * patch]
            assert torch.equal(patches[:, r * cols + c], window.reshape(N, -1))
    assert torch.equal(unpatchify(patches, patch, H, W), images)


def test_patchify_flattens_a_patch_channel_by_channel_then_row_by_row() -> None:
    image = torch.arange(2 * 4 * 4, dtype=torch.float32).reshape(1, 2, 4, 4)
    first = patchify(image, 2)[0, 0]
    assert first.tolist() == [0, 1, 4, 5, 16, 17, 20, 21]


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: patchify(torch.rand(2, 1, 8, 6), 4), ValueError, "multiples of patch = 4"),
        (lambda: patchify(torch.rand(2, 1, 8, 8), 0), ValueError, "patch must be an integer >= 1"),
        (lambda: patchify(torch.rand(2, 1, 8, 8), 2.0), TypeError, "patch must be an integer"),
        (lambda: patchify(torch.rand(1, 8, 8), 2), ValueError, "images must have 4 dimensions"),
        (lambda: patchify(torch.ones(1, 1, 8, 8, dtype=torch.int64), 2), TypeError, "floating"),
        (lambda: patchify(np.ones((1, 1, 8, 8)), 2), TypeError, "images must be a torch.Tensor"),
        (
            lambda: unpatchify(torch.rand(2, 15, 4), 2, 8, 8),
            ValueError,
            r"patches must have shape \(N, 16",
        ),
        (lambda: unpatchify(torch.rand(2, 16, 4), 2, 8, 7), ValueError, "multiples of patch"),
        (lambda: unpatchify(torch.rand(2, 16, 5), 2, 8, 8), ValueError, "patches must have shape"),
    ],
)
def test_patch_functions_reject_bad_input(
    call: Callable[[], object], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        call()


def test_shuffle_patches_permutes_each_images_patches() -> None:
    images = images_like(5, 2, 8, 8)
    shuffled = shuffle_patches(images, 2, torch.Generator().manual_seed(0))
    assert shuffled.shape == images.shape
    before, after = patchify(images, 2), patchify(shuffled, 2)
    orders = []
    for n in range(5):
        # each patch of the shuffled image is exactly one of the original's
        match = (after[n][:, None] == before[n][None]).all(dim=-1)  # (P, P)
        assert match.sum(dim=1).eq(1).all()
        assert match.sum(dim=0).eq(1).all()
        orders.append(match.float().argmax(dim=1))
    assert len({tuple(order.tolist()) for order in orders}) == 5  # one order per image
    again = shuffle_patches(images, 2, torch.Generator().manual_seed(0))
    assert torch.equal(shuffled, again)
    with pytest.raises(TypeError, match=r"generator must be None or a torch\.Generator"):
        shuffle_patches(images, 2, 0)  # type: ignore[arg-type]


def test_random_shift_moves_each_image_by_at_most_shift_pixels() -> None:
    images = images_like(40, 1, 8, 8)
    shift = 2
    moved = random_shift(images, shift, torch.Generator().manual_seed(1))
    padded = F.pad(images, (shift,) * 4)
    seen = set()
    for n in range(40):
        candidates = [
            (dy, dx)
            for dy in range(-shift, shift + 1)
            for dx in range(-shift, shift + 1)
            if torch.equal(
                moved[n],
                padded[n, :, shift - dy : shift - dy + 8, shift - dx : shift - dx + 8],
            )
        ]
        assert len(candidates) == 1
        seen.add(candidates[0])
    assert len(seen) > 10  # many of the 25 shifts drawn
    assert random_shift(images, 0) is images
    with pytest.raises(ValueError, match="shift must be an integer >= 0"):
        random_shift(images, -1)


# -- the patch embedding is a convolution ---------------------------------------


def test_patch_embedding_is_a_strided_conv2d(dtype: torch.dtype, randomize: Randomize) -> None:
    embed = randomize(PatchEmbedding(patch=4, channels=3, d_model=24).to(dtype))
    images = images_like(4, 3, 16, 12, dtype=dtype)
    conv = embed.as_conv2d()
    assert conv.kernel_size == conv.stride == (4, 4)
    assert conv.weight.dtype == dtype
    with torch.no_grad():
        ours = embed(images)  # (N, P, D)
        theirs = conv(images).flatten(2).transpose(1, 2)  # (N, D, 4, 3) -> (N, P, D)
    assert ours.shape == (4, 12, 24)
    assert float((ours - theirs).abs().max()) < CONV_BOUND[dtype]
    torch.testing.assert_close(ours, theirs)
    # copies, not views: changing the conv leaves the embedding alone
    with torch.no_grad():
        conv.weight.zero_()
    assert embed.proj.weight.abs().sum() > 0


def test_patch_embedding_rejects_images_that_do_not_fit() -> None:
    embed = PatchEmbedding(patch=2, channels=1, d_model=8)
    with pytest.raises(ValueError, match=r"images must have 1 channel\(s\)"):
        embed(torch.rand(2, 3, 8, 8))
    with pytest.raises(TypeError, match="images must have the dtype"):
        embed(torch.rand(2, 1, 8, 8, dtype=torch.float64))
    with pytest.raises(ValueError, match="multiples of patch = 2"):
        embed(torch.rand(2, 1, 7, 8))
    with pytest.raises(ValueError, match="d_model must be an integer >= 1"):
        PatchEmbedding(2, 1, 0)


# -- the Vision Transformer against the paper's equations ----------------------


def reference_vit(model: VisionTransformer, images: torch.Tensor) -> torch.Tensor:
    """The ViT paper's equations 1-4 with ``model``'s weights, in plain tensor operations.

    The feed-forward network is the book's (ReLU, where the paper has GELU);
    each block's LayerNorms, attention and MLP are written out here from the
    paper, not called.
    """
    p = model.patch
    N, C, H, W = images.shape
    state = model.state_dict()

    def ln(z: torch.Tensor, name: str) -> torch.Tensor:
        mean = z.mean(dim=-1, keepdim=True)
        var = ((z - mean) ** 2).mean(dim=-1, keepdim=True)
        return (z - mean) / torch.sqrt(var + 1e-5) * state[f"{name}.weight"] + state[f"{name}.bias"]

    def linear(z: torch.Tensor, name: str) -> torch.Tensor:
        return z @ state[f"{name}.weight"].T + state[f"{name}.bias"]

    def msa(z: torch.Tensor, name: str, heads: int) -> torch.Tensor:
        # appendix A: [q, k, v] = z U_qkv; A = softmax(q k^T / sqrt(D_h)); SA = A v;
        # MSA(z) = [SA_1(z); ...; SA_k(z)] U_msa
        q, k, v = (linear(z, f"{name}.{x}_proj") for x in "qkv")
        D_h = z.shape[-1] // heads
        outputs = []
        for h in range(heads):
            part = slice(h * D_h, (h + 1) * D_h)
            A = torch.softmax(
                q[..., part] @ k[..., part].transpose(-1, -2) / math.sqrt(D_h), dim=-1
            )
            outputs.append(A @ v[..., part])
        return linear(torch.cat(outputs, dim=-1), f"{name}.out_proj")

    def mlp(z: torch.Tensor, name: str) -> torch.Tensor:
        return linear(torch.relu(linear(z, f"{name}.linear1")), f"{name}.linear2")

    # eq. 1: z_0 = [x_class; x_p^1 E; ...; x_p^N E] + E_pos
    x_p = torch.stack(
        [
            images[:, :, r : r + p, c : c + p].reshape(N, C * p * p)
            for r in range(0, H, p)
            for c in range(0, W, p)
        ],
        dim=1,
    )  # (N, P, C p^2), patches in reading order
    tokens = linear(x_p, "patch_embedding.proj")
    x_class = state["class_token"].expand(N, 1, -1)
    z = torch.cat([x_class, tokens], dim=1)
    if model.positions:
        z = z + state["position_table"]
    heads = model.encoder.layers[0].self_attn.num_heads
    for layer in range(len(model.encoder.layers)):  # l = 1, ..., L
        name = f"encoder.layers.{layer}"
        z = msa(ln(z, f"{name}.norm1"), f"{name}.self_attn", heads) + z  # eq. 2
        z = mlp(ln(z, f"{name}.norm2"), f"{name}.feed_forward") + z  # eq. 3
    y = ln(z[:, 0], "encoder.final_norm")  # eq. 4: y = LN(z_L^0)
    return linear(y, "head")


@pytest.mark.parametrize("positions", [True, False])
@pytest.mark.parametrize("patch", [2, 4])
def test_vision_transformer_follows_the_papers_equations(
    dtype: torch.dtype, randomize: Randomize, patch: int, positions: bool
) -> None:
    model = VisionTransformer(
        8, patch, d_model=24, num_layers=3, num_heads=3, d_ff=40, positions=positions
    )
    randomize(model.to(dtype), seed=2)
    images = images_like(6, 1, 8, 8, dtype=dtype, seed=3)
    with torch.no_grad():
        ours, theirs = model(images), reference_vit(model, images)
    assert ours.shape == (6, 10)
    # PyTorch's default tolerances: float32 rtol 1.3e-6, atol 1e-5; float64 rtol 1e-7, atol 1e-7
    torch.testing.assert_close(ours, theirs)
    bound = {torch.float64: 1e-12, torch.float32: 1e-5}[dtype]
    assert float((ours - theirs).abs().max()) < bound


def test_vision_transformer_uses_the_books_pre_norm_encoder() -> None:
    model = VisionTransformer(8, 2, d_model=16, num_heads=4, num_layers=2)
    assert model.encoder.norm_first
    assert model.encoder.final_norm is not None
    assert all(block.norm_first for block in model.encoder.layers)
    assert model.position_table is not None
    assert model.position_table.shape == (17, 16)
    assert model.class_token.shape == (1, 1, 16)
    assert VisionTransformer(8, 4, d_model=16, positions=False).position_table is None


def test_vision_transformer_rejects_bad_settings_and_input() -> None:
    with pytest.raises(ValueError, match="patch must divide image_size = 8, got 3"):
        VisionTransformer(8, 3)
    with pytest.raises(ValueError, match="num_heads"):
        VisionTransformer(8, 2, d_model=10, num_heads=4)
    with pytest.raises(TypeError, match="positions must be a bool"):
        VisionTransformer(8, 2, positions=1)  # type: ignore[arg-type]
    model = VisionTransformer(8, 2, d_model=16)
    with pytest.raises(ValueError, match="images must be 8 x 8"):
        model(torch.rand(2, 1, 12, 12))
    with pytest.raises(ValueError, match="images must have 4 dimensions"):
        model(torch.rand(1, 8, 8))
    with pytest.raises(TypeError, match="images must have the dtype"):
        model(torch.rand(2, 1, 8, 8, dtype=torch.float64))


def test_without_positions_a_shuffle_of_the_patches_changes_nothing(randomize: Randomize) -> None:
    images = images_like(8, 1, 8, 8, dtype=torch.float64, seed=4)
    shuffled = shuffle_patches(images, 2, torch.Generator().manual_seed(5))
    blind = randomize(VisionTransformer(8, 2, d_model=16, positions=False).double(), seed=6)
    sighted = randomize(VisionTransformer(8, 2, d_model=16).double(), seed=6)
    with torch.no_grad():
        # the same logits up to the order of the sums over the patches
        torch.testing.assert_close(blind(shuffled), blind(images), rtol=0, atol=1e-12)
        assert (sighted(shuffled) - sighted(images)).abs().max() > 1e-3


# -- attention weights and rollout ----------------------------------------------


def test_attention_weights_are_the_blocks_own(randomize: Randomize) -> None:
    model = randomize(VisionTransformer(8, 2, d_model=16, num_heads=4, num_layers=2), seed=7)
    images = images_like(3, 1, 8, 8, seed=8)
    with torch.no_grad():
        weights = model.attention_weights(images)
        # the first block reads z_0 through its first LayerNorm
        z0 = torch.cat([model.class_token.expand(3, 1, -1), model.patch_embedding(images)], dim=1)
        assert model.position_table is not None
        z0 = z0 + model.position_table
        block = model.encoder.layers[0]
        x = block.norm1(z0)
        _, expected = block.self_attn(x, x, x, return_weights=True)
    assert len(weights) == 2
    assert all(w.shape == (3, 4, 17, 17) for w in weights)
    torch.testing.assert_close(weights[0], expected)
    for w in weights:
        torch.testing.assert_close(w.sum(dim=-1), torch.ones(3, 4, 17))
    # the recording hooks are gone again
    assert all(not block.self_attn._forward_pre_hooks for block in model.encoder.layers)


def test_attention_rollout_multiplies_the_layers_with_the_residual() -> None:
    gen = torch.Generator().manual_seed(9)
    layers = [
        torch.softmax(torch.randn(2, 3, 5, 5, generator=gen, dtype=torch.float64), -1)
        for _ in range(3)
    ]
    rollout = attention_rollout(layers)
    assert rollout.shape == (2, 5, 5)
    torch.testing.assert_close(rollout.sum(dim=-1), torch.ones(2, 5, dtype=torch.float64))
    expected = torch.eye(5, dtype=torch.float64).expand(2, 5, 5)
    for w in layers:  # A = (mean over heads + I) / 2: rows already sum to 1
        expected = (0.5 * w.mean(dim=1) + 0.5 * torch.eye(5, dtype=torch.float64)) @ expected
    torch.testing.assert_close(rollout, expected)
    # attention to oneself only: nothing mixes
    identity = torch.eye(5).expand(2, 3, 5, 5)
    torch.testing.assert_close(
        attention_rollout([identity, identity]), torch.eye(5).expand(2, 5, 5)
    )


def test_attention_rollout_of_a_trained_shape_model_sums_to_one(randomize: Randomize) -> None:
    model = randomize(VisionTransformer(8, 2, d_model=16, num_layers=3), seed=10)
    with torch.no_grad():
        rollout = attention_rollout(model.attention_weights(images_like(4, 1, 8, 8)))
    assert rollout.shape == (4, 17, 17)
    torch.testing.assert_close(rollout.sum(dim=-1), torch.ones(4, 17))
    assert (rollout >= 0).all()


@pytest.mark.parametrize(
    ("attentions", "error", "match"),
    [
        ([], ValueError, "at least one layer"),
        (torch.rand(2, 2, 3, 3), TypeError, "attentions must be a sequence"),
        ([torch.rand(2, 3, 3)], ValueError, "attentions\\[0\\] must have 4 dimensions"),
        ([torch.rand(2, 2, 3, 4)], ValueError, "square"),
        (
            [torch.rand(2, 2, 3, 3), torch.rand(2, 2, 4, 4)],
            ValueError,
            "attentions\\[1\\] must have the shape",
        ),
        ([torch.ones(2, 2, 3, 3, dtype=torch.int64)], TypeError, "floating"),
    ],
)
def test_attention_rollout_rejects_bad_input(
    attentions: object, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        attention_rollout(attentions)  # type: ignore[arg-type]


# -- position similarity --------------------------------------------------------


def test_position_similarity_is_the_cosine_of_the_patch_rows() -> None:
    model = seeded(0, lambda: VisionTransformer(8, 2, d_model=16))
    similarity = position_similarity(model)
    assert similarity.shape == (4, 4, 4, 4)
    flat = similarity.reshape(16, 16)
    torch.testing.assert_close(flat, flat.T)
    torch.testing.assert_close(flat.diagonal(), torch.ones(16))
    assert model.position_table is not None
    table = model.position_table.detach()
    expected = F.cosine_similarity(table[1 + 6], table[1 + 9], dim=0)  # (1, 2) and (2, 1)
    torch.testing.assert_close(similarity[1, 2, 2, 1], expected)
    with pytest.raises(ValueError, match="positions=False"):
        position_similarity(VisionTransformer(8, 2, positions=False))
    with pytest.raises(TypeError, match="model must be a VisionTransformer"):
        position_similarity(nn.Linear(2, 2))  # type: ignore[arg-type]


def grid_distance(rows: int, cols: int) -> torch.Tensor:
    r, c = torch.meshgrid(torch.arange(rows), torch.arange(cols), indexing="ij")
    where = torch.stack([r, c], dim=-1).double()  # (rows, cols, 2)
    return (where[:, :, None, None] - where[None, None]).abs().sum(-1)  # (rows, cols, rows, cols)


def test_neighbour_fraction_counts_nearest_patches_next_door() -> None:
    distance = grid_distance(4, 4)
    assert neighbour_fraction(-distance) == 1.0
    # most similar: the patch two columns away (or two back), never a neighbour
    far = -(distance - 2.0).abs() - 10 * (distance == 0).double()
    assert neighbour_fraction(far) == 0.0
    with pytest.raises(ValueError, match=r"similarity must have shape \(rows, cols, rows, cols\)"):
        neighbour_fraction(torch.rand(4, 4, 4, 3))
    with pytest.raises(ValueError, match="at least 2 patches"):
        neighbour_fraction(torch.rand(1, 1, 1, 1))


@pytest.mark.parametrize(("rows", "cols"), [(4, 4), (2, 2), (3, 5), (1, 6)])
def test_neighbour_chance_is_the_mean_share_of_neighbours(rows: int, cols: int) -> None:
    distance = grid_distance(rows, cols).reshape(rows * cols, rows * cols)
    neighbours = (distance == 1).sum(dim=1).double()
    assert neighbour_chance(rows, cols) == pytest.approx(
        float((neighbours / (rows * cols - 1)).mean())
    )
    assert neighbour_chance(4, 4) == pytest.approx(0.2)


def test_neighbour_chance_rejects_a_single_patch() -> None:
    with pytest.raises(ValueError, match="at least 2 patches"):
        neighbour_chance(1, 1)
    with pytest.raises(TypeError, match="rows must be an integer"):
        neighbour_chance(2.0, 2)  # type: ignore[arg-type]


# -- the baselines, training and evaluation -----------------------------------


def test_the_three_models_have_about_the_same_size() -> None:
    counts = {kind: parameter_count(build_digit_model(kind)) for kind in MODEL_KINDS}
    vit = counts["vit"]
    assert all(abs(count - vit) / vit < 0.05 for count in counts.values())
    assert counts["vit"] - counts["vit_no_positions"] == 17 * 32  # the position table
    images = torch.rand(3, 1, 8, 8)
    for kind in MODEL_KINDS:
        assert build_digit_model(kind)(images).shape == (3, 10)
    coarse = build_digit_model("vit", patch=4)
    assert isinstance(coarse, VisionTransformer)
    assert coarse.num_patches == 4


def test_baselines_reject_bad_input() -> None:
    with pytest.raises(ValueError, match="images must have 64 values each"):
        PixelMLP(64)(torch.rand(2, 1, 4, 4))
    with pytest.raises(ValueError, match=r"images must have shape \(B, 1, 8, 8\)"):
        TinyCNN()(torch.rand(2, 1, 6, 6))
    with pytest.raises(ValueError, match="image_size must be even"):
        TinyCNN(image_size=7)
    with pytest.raises(ValueError, match="kind must be one of"):
        build_digit_model("resnet")
    with pytest.raises(TypeError, match="kind must be a string"):
        build_digit_model(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"model must be a torch\.nn\.Module"):
        parameter_count("vit")  # type: ignore[arg-type]


TINY = {"epochs": 1, "warmup_steps": 5}


def test_train_digit_model_is_deterministic_and_reports_its_run() -> None:
    run = train_digit_model("mlp", 0, **TINY)
    again = train_digit_model("mlp", 0, **TINY)
    np.testing.assert_array_equal(run.losses, again.losses)
    assert run.losses.shape == (21,)  # ceil(1297 / 64) steps
    assert not np.array_equal(run.losses, train_digit_model("mlp", 1, **TINY).losses)
    assert run.parameters == parameter_count(run.model)
    assert run.test_predictions.shape == (500,)
    data = load_digits_split()
    assert run.test_accuracy == pytest.approx(
        evaluate(run.model, data.test_images, data.test_labels)
    )
    assert run.train_seconds > 0
    assert run.settings["shift"] == 0
    assert not run.model.training


def test_fit_with_shifts_draws_other_batches_than_without() -> None:
    data = load_digits_split()
    losses = {}
    for shift in (0, 1):
        model = seeded(0, lambda: PixelMLP(64, 16))
        losses[shift] = fit(model, data.train_images, data.train_labels, shift=shift, **TINY)
    assert not np.array_equal(losses[0], losses[1])


@pytest.mark.parametrize(
    ("argument", "value", "error", "match"),
    [
        ("kind", "vgg", ValueError, "kind must be one of"),
        ("seed", -1, ValueError, "seed"),
        ("epochs", 0, ValueError, "epochs"),
        ("batch_size", 1.5, TypeError, "batch_size"),
        ("lr", 0.0, ValueError, "lr"),
        ("weight_decay", -0.1, ValueError, "weight_decay"),
        ("warmup_steps", 21, ValueError, "warmup_steps must be fewer than the 21 steps"),
        ("shift", -1, ValueError, "shift"),
        ("patch", 3, ValueError, "patch must divide image_size"),
        ("device", 3, TypeError, "device"),
    ],
)
def test_train_digit_model_rejects_bad_input(
    argument: str, value: object, error: type[Exception], match: str
) -> None:
    settings: dict[str, object] = {"kind": "vit", "seed": 0, **TINY, argument: value}
    with pytest.raises(error, match=match):
        train_digit_model(**settings)  # type: ignore[arg-type]


def test_fit_and_evaluate_reject_labels_that_do_not_fit() -> None:
    model = PixelMLP(64, 8)
    images = torch.rand(4, 1, 8, 8)
    with pytest.raises(TypeError, match=r"labels must be an int64 torch\.Tensor"):
        evaluate(model, images, torch.zeros(4))
    with pytest.raises(ValueError, match=r"labels must have shape \(4,\)"):
        evaluate(model, images, torch.zeros(3, dtype=torch.int64))
    with pytest.raises(TypeError, match=r"model must be a torch\.nn\.Module"):
        fit("mlp", images, torch.zeros(4, dtype=torch.int64))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least one image"):
        evaluate(model, torch.rand(0, 1, 8, 8), torch.zeros(0, dtype=torch.int64))


# -- the lesson's runs (each model trains for a few seconds) --------------------


@pytest.fixture(scope="module")
def lesson_runs():  # type: ignore[no-untyped-def]
    return {kind: train_digit_model(kind, 0) for kind in MODEL_KINDS}


@pytest.mark.slow
def test_the_lessons_models_learn_the_digits(lesson_runs) -> None:  # type: ignore[no-untyped-def]
    accuracy = {kind: run.test_accuracy for kind, run in lesson_runs.items()}
    assert accuracy["vit"] >= 0.95
    assert accuracy["mlp"] >= 0.94
    assert accuracy["cnn"] >= 0.96
    # positions are worth many points; the CNN's built-in locality wins on small data
    assert accuracy["vit"] - accuracy["vit_no_positions"] > 0.1
    assert accuracy["cnn"] >= accuracy["vit"] - 0.01


@pytest.mark.slow
def test_a_vit_without_positions_is_blind_to_shuffled_patches(lesson_runs) -> None:  # type: ignore[no-untyped-def]
    data = load_digits_split()
    shuffled = shuffle_patches(data.test_images, 2, torch.Generator().manual_seed(0))
    blind, sighted = lesson_runs["vit_no_positions"].model, lesson_runs["vit"].model
    assert evaluate(blind, shuffled, data.test_labels) == evaluate(
        blind, data.test_images, data.test_labels
    )
    assert evaluate(sighted, shuffled, data.test_labels) < 0.5
