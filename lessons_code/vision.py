"""A Vision Transformer: images as sequences of patches, read by the book's encoder.

A Vision Transformer (ViT; Dosovitskiy et al., 2021) cuts an image into
square patches, flattens each one and projects it to the model width, so
that an image becomes a sequence of tokens. A learned class token is put in
front, a learned position table is added, and the same pre-norm encoder
blocks that read sentences (:class:`lessons_code.blocks.Encoder`) read the
patches; a linear head classifies the class token's final state. Nothing in
the encoder knows that its tokens came from pixels.

- :func:`load_digits_split`: scikit-learn's 8 x 8 handwritten digits (1,797
  images shipped inside its wheel: nothing is downloaded), split once and
  for all into 1,297 training and 500 test images, stratified by digit;
- :func:`patchify`, :func:`unpatchify` and :class:`PatchEmbedding` (a
  linear map of flattened patches, which is exactly a ``Conv2d`` with
  kernel = stride = patch size: :meth:`PatchEmbedding.as_conv2d`);
- :class:`VisionTransformer`, and two baselines of about its size that see
  the same pixels: :class:`PixelMLP` and :class:`TinyCNN`;
- :func:`train_digit_model`, one training recipe for all of them
  (:func:`fit`: AdamW, minibatches, a warm-up into a cosine, optionally on
  copies shifted by a pixel or two, :func:`random_shift`), and
  :func:`evaluate`;
- what a trained ViT learned: :meth:`VisionTransformer.attention_weights`,
  :func:`attention_rollout` (Abnar & Zuidema, 2020),
  :func:`position_similarity` and :func:`neighbour_fraction`;
- :func:`shuffle_patches`: the same patches in another order, which a ViT
  without its position table cannot tell from the original.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from lessons_code._checks import (
    check_bool,
    check_device,
    check_int,
    check_like,
    check_real,
    check_tensor,
)
from lessons_code.blocks import Encoder, EncoderBlock
from lessons_code.results import stored
from lessons_code.training import seeded, warmup_cosine

__all__ = [
    "MODEL_KINDS",
    "TEST_SIZE",
    "DigitExperiment",
    "DigitsSplit",
    "PatchEmbedding",
    "PixelMLP",
    "TinyCNN",
    "VisionTransformer",
    "attention_rollout",
    "build_digit_model",
    "evaluate",
    "fit",
    "load_digits_split",
    "neighbour_chance",
    "neighbour_fraction",
    "parameter_count",
    "patchify",
    "position_similarity",
    "random_shift",
    "shuffle_patches",
    "train_digit_model",
    "unpatchify",
]

#: Images in the test split of :func:`load_digits_split` (the other 1,297 train).
TEST_SIZE = 500
# The seed of the split's draw: fixed, so every reader gets the same split.
_SPLIT_SEED = 0
#: The models :func:`build_digit_model` and :func:`train_digit_model` know.
MODEL_KINDS = ("vit", "vit_no_positions", "mlp", "cnn")


# --------------------------------------------------------------------------
# The data: scikit-learn's 8 x 8 digits
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class DigitsSplit:
    """The digits of :func:`load_digits_split`, as tensors.

    Attributes
    ----------
    train_images, test_images
        float32 images ``(N, 1, 8, 8)``, values in ``[0, 1]`` (the
        data set's grey levels 0 to 16, divided by 16).
    train_labels, test_labels
        int64 digits 0 to 9, ``(N,)``.
    train_index, test_index
        Each image's row in ``sklearn.datasets.load_digits()``, ``(N,)``.
    """

    train_images: torch.Tensor
    train_labels: torch.Tensor
    test_images: torch.Tensor
    test_labels: torch.Tensor
    train_index: np.ndarray
    test_index: np.ndarray


@functools.cache
def _digits() -> tuple[np.ndarray, np.ndarray]:
    """Return the 1,797 images ``(N, 8, 8)``, grey levels 0 to 16, and their labels."""
    try:
        from sklearn.datasets import load_digits  # type: ignore[import-untyped]
    except (
        ImportError
    ) as error:  # scikit-learn is in the `examples` extra
        raise ImportError(
            "the digits come with scikit-learn: pip install scikit-learn"
        ) from error
    digits = load_digits()
    images = np.asarray(digits.images, dtype=np.float64)
    labels = np.asarray(digits.target, dtype=np.int64)
    images.flags.writeable = False  # cached: shared by every call
    labels.flags.writeable = False
    return images, labels


def _stratified_test_index(
    labels: np.ndarray, test_size: int, seed: int
) -> np.ndarray:
    """Rows for a test set of ``test_size`` with each class in its share.

    Each class gets ``test_size * n_class / n`` rows rounded down, and the
    rows left over go to the classes with the largest remainders; within a
    class the rows are drawn at random with ``seed``.
    """
    rng = np.random.default_rng(seed)
    classes, counts = np.unique(labels, return_counts=True)
    shares = test_size * counts / counts.sum()
    quota = np.floor(shares).astype(np.int64)
    left = test_size - int(quota.sum())
    quota[np.argsort(quota - shares, kind="stable")[:left]] += 1
    chosen = [
        rng.permutation(np.flatnonzero(labels == c))[:q]
        for c, q in zip(classes, quota, strict=True)
    ]
    return np.sort(np.concatenate(chosen))


def load_digits_split() -> DigitsSplit:
    """Return scikit-learn's 8 x 8 digits, split into 1,297 training and 500 test images.

    The 1,797 images of ``sklearn.datasets.load_digits`` ship inside
    scikit-learn's wheel, so nothing is downloaded. They are the test part
    of the UCI optical-recognition digits (Alpaydin & Kaynak, 1998),
    written by 13 people; each pixel counts the inked pixels of a 4 x 4
    block of a 32 x 32 scan, 0 to 16. The split is
    fixed: the same for every call, machine and reader. It is stratified:
    each digit has its share of the 500 test images (48 to 51 of each),
    drawn within the digit with NumPy's ``default_rng(0)``; the rest train.
    The writers of the two sets overlap (the data set does not say who
    wrote which digit), so the test accuracy measures new digits by
    familiar hands.

    Returns
    -------
    DigitsSplit
        The images, scaled to ``[0, 1]`` as float32 ``(N, 1, 8, 8)``, their
        int64 labels, and their rows in the data set.

    Raises
    ------
    ImportError
        If scikit-learn is not installed.

    Examples
    --------
    >>> data = load_digits_split()
    >>> data.train_images.shape, data.test_images.shape
    (torch.Size([1297, 1, 8, 8]), torch.Size([500, 1, 8, 8]))
    >>> data.test_labels.bincount().tolist()
    [50, 51, 49, 51, 50, 51, 50, 50, 48, 50]
    >>> float(data.train_images.min()), float(data.train_images.max())
    (0.0, 1.0)
    """
    images, labels = _digits()
    test = _stratified_test_index(labels, TEST_SIZE, _SPLIT_SEED)
    train = np.setdiff1d(np.arange(len(labels)), test)

    def tensors(rows: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        pixels = torch.tensor(images[rows] / 16.0, dtype=torch.float32)
        return pixels[:, None], torch.tensor(labels[rows])  # (N, 1, 8, 8)

    train_images, train_labels = tensors(train)
    test_images, test_labels = tensors(test)
    return DigitsSplit(
        train_images=train_images,
        train_labels=train_labels,
        test_images=test_images,
        test_labels=test_labels,
        train_index=train,
        test_index=test,
    )


# --------------------------------------------------------------------------
# Images as sequences of patches
# --------------------------------------------------------------------------


def _check_images(
    images: object, name: str, patch: int | None = None
) -> torch.Tensor:
    """Return ``images`` if it is ``(N, C, H, W)``, ``H`` and ``W`` multiples of ``patch``."""
    images = check_tensor(images, name, ndim=4)
    if patch is not None:
        H, W = images.shape[-2:]
        if H % patch or W % patch:
            raise ValueError(
                f"the height and width of {name} must be multiples of patch = "
                f"{patch}, got shape {tuple(images.shape)}"
            )
    return images


def patchify(images: torch.Tensor, patch: int) -> torch.Tensor:
    """Cut images into square patches and flatten each: one row per patch.

    The patches come in reading order (row-major: left to right, then top
    to bottom); each is flattened channel by channel, each channel's
    ``patch x patch`` pixels row by row, the order in which a
    ``torch.nn.Conv2d`` weight ``(D, C, patch, patch)`` flattens.

    Parameters
    ----------
    images
        A batch of images.
    patch
        Side of the square patches, in pixels; it must divide ``H`` and
        ``W``.

    Returns
    -------
    torch.Tensor
        The patches, ``(N, P, C * patch * patch)``.

    Shape
    -----
    - ``images``: ``(N, C, H, W)``.
    - Output: ``(N, P, C * patch * patch)`` with
      ``P = (H / patch) * (W / patch)``.

    where ``N`` is the number of images, ``C`` of channels, ``H`` and
    ``W`` the height and width and ``P`` the number of patches.

    Raises
    ------
    TypeError
        If ``images`` is not a floating-point tensor or ``patch`` not an
        integer.
    ValueError
        If ``images`` is not 4-dimensional, ``patch < 1``, or ``patch``
        does not divide ``H`` and ``W``.

    Examples
    --------
    >>> image = torch.arange(16.0).reshape(1, 1, 4, 4)
    >>> image[0, 0]
    tensor([[ 0.,  1.,  2.,  3.],
            [ 4.,  5.,  6.,  7.],
            [ 8.,  9., 10., 11.],
            [12., 13., 14., 15.]])
    >>> patchify(image, 2)[0]  # 4 patches of 2 x 2 pixels, in reading order
    tensor([[ 0.,  1.,  4.,  5.],
            [ 2.,  3.,  6.,  7.],
            [ 8.,  9., 12., 13.],
            [10., 11., 14., 15.]])
    """
    patch = check_int(patch, "patch", minimum=1)
    images = _check_images(images, "images", patch)
    return _patchify(images, patch)


def _patchify(images: torch.Tensor, patch: int) -> torch.Tensor:
    """:func:`patchify` without the checks."""
    N, C, H, W = images.shape
    rows, cols = H // patch, W // patch
    # split each axis into (which patch, pixel within it)
    x = images.reshape(N, C, rows, patch, cols, patch)
    x = x.permute(0, 2, 4, 1, 3, 5)  # (N, rows, cols, C, patch, patch)
    return x.reshape(N, rows * cols, C * patch * patch)  # (N, P, C p p)


def unpatchify(
    patches: torch.Tensor, patch: int, height: int, width: int
) -> torch.Tensor:
    """Put patches back together into images: the inverse of :func:`patchify`.

    Parameters
    ----------
    patches
        Flattened patches in reading order, as :func:`patchify` returns
        them.
    patch
        Side of the square patches, in pixels.
    height, width
        Size of the images, multiples of ``patch``.

    Returns
    -------
    torch.Tensor
        The images ``(N, C, height, width)``.

    Shape
    -----
    - ``patches``: ``(N, P, C * patch * patch)`` with
      ``P = (height / patch) * (width / patch)``.
    - Output: ``(N, C, height, width)``.

    where ``N`` is the number of images, ``C`` of channels and ``P`` of
    patches.

    Raises
    ------
    TypeError
        If ``patches`` is not a floating-point tensor or a size not an
        integer.
    ValueError
        If ``patches`` is not 3-dimensional, or its shape does not fit the
        sizes.

    Examples
    --------
    >>> images = torch.randn(2, 3, 8, 4)
    >>> torch.equal(unpatchify(patchify(images, 2), 2, 8, 4), images)
    True
    """
    patch = check_int(patch, "patch", minimum=1)
    height = check_int(height, "height", minimum=patch)
    width = check_int(width, "width", minimum=patch)
    patches = check_tensor(patches, "patches", ndim=3)
    if height % patch or width % patch:
        raise ValueError(
            f"height and width must be multiples of patch = {patch}, "
            f"got {height} and {width}"
        )
    N, P, K = patches.shape
    rows, cols = height // patch, width // patch
    if rows * cols != P or K % (patch * patch):
        raise ValueError(
            f"patches must have shape (N, {rows * cols}, C * {patch * patch}) "
            f"for {height} x {width} images, got shape {tuple(patches.shape)}"
        )
    C = K // (patch * patch)
    x = patches.reshape(N, rows, cols, C, patch, patch)
    x = x.permute(0, 3, 1, 4, 2, 5)  # (N, C, rows, patch, cols, patch)
    return x.reshape(N, C, height, width)


def shuffle_patches(
    images: torch.Tensor,
    patch: int,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Return the images with their patches in a random order, one order per image.

    Every patch keeps its pixels; only where it sits changes. A model that
    reads the patches as an unordered set (a ViT without positions) gives
    the same answer for the shuffled image as for the original.

    Parameters
    ----------
    images
        A batch of images.
    patch
        Side of the square patches; it must divide ``H`` and ``W``.
    generator
        The random generator of the orders (default: PyTorch's global one).

    Returns
    -------
    torch.Tensor
        The shuffled images, the shape, dtype and device of ``images``.

    Shape
    -----
    ``images`` and output: ``(N, C, H, W)``.

    Raises
    ------
    TypeError
        If ``images`` is not a floating-point tensor, ``patch`` not an
        integer, or ``generator`` not a ``torch.Generator``.
    ValueError
        If ``images`` is not 4-dimensional or ``patch`` does not divide
        ``H`` and ``W``.

    Examples
    --------
    >>> image = torch.arange(16.0).reshape(1, 1, 4, 4)
    >>> shuffled = shuffle_patches(image, 2, torch.Generator().manual_seed(0))
    >>> shuffled[0, 0]
    tensor([[ 8.,  9., 10., 11.],
            [12., 13., 14., 15.],
            [ 0.,  1.,  2.,  3.],
            [ 4.,  5.,  6.,  7.]])
    >>> sorted(patchify(shuffled, 2)[0].tolist()) == sorted(patchify(image, 2)[0].tolist())
    True
    """
    patch = check_int(patch, "patch", minimum=1)
    images = _check_images(images, "images", patch)
    _check_generator(generator)
    N, _, H, W = images.shape
    patches = _patchify(images, patch)  # (N, P, C p p)
    P = patches.shape[1]
    # one random order per image: the ranks of P random numbers
    noise = torch.rand(N, P, generator=generator)
    order = noise.argsort(dim=1).to(images.device)  # (N, P)
    index = order[:, :, None].expand_as(patches)  # (N, P, C p p)
    return unpatchify(patches.gather(1, index), patch, H, W)


def random_shift(
    images: torch.Tensor,
    shift: int,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Translate each image by a random number of pixels, at most ``shift`` each way.

    Each image moves by its own ``(dy, dx)``, each drawn uniformly from
    ``-shift, ..., shift``; pixels that enter from outside are 0 (the
    digits' background) and pixels pushed out are lost. Trained on shifted
    copies, a model sees a stroke at neighbouring positions: a ViT's
    learned position embeddings then grow alike for neighbouring patches.

    Parameters
    ----------
    images
        A batch of images.
    shift
        Largest translation, in pixels (0 returns ``images`` unchanged).
    generator
        The random generator of the shifts (default: PyTorch's global one).

    Returns
    -------
    torch.Tensor
        The shifted images, the shape, dtype and device of ``images``.

    Shape
    -----
    ``images`` and output: ``(N, C, H, W)``.

    Raises
    ------
    TypeError
        If ``images`` is not a floating-point tensor, ``shift`` not an
        integer or ``generator`` not a ``torch.Generator``.
    ValueError
        If ``images`` is not 4-dimensional or ``shift < 0``.

    Examples
    --------
    >>> image = torch.zeros(1, 1, 3, 3)
    >>> image[0, 0, 1, 1] = 1.0  # one lit pixel, in the centre
    >>> moved = random_shift(image.expand(100, 1, 3, 3), 1, torch.Generator().manual_seed(0))
    >>> moved.sum(dim=(1, 2, 3)).unique()  # the pixel stays inside: never lost
    tensor([1.])
    >>> bool((moved.sum(dim=0) > 0).all())  # and it lands on every pixel
    True
    """
    images = _check_images(images, "images")
    shift = check_int(shift, "shift", minimum=0)
    _check_generator(generator)
    if shift == 0:
        return images
    return _random_shift(images, shift, generator)


def _random_shift(
    images: torch.Tensor, shift: int, generator: torch.Generator | None
) -> torch.Tensor:
    """:func:`random_shift` without the checks."""
    N, _, H, W = images.shape
    padded = F.pad(images, (shift, shift, shift, shift))  # zeros around
    # each image's window into the padded one: its top-left corner
    corner = torch.randint(
        0, 2 * shift + 1, (2, N, 1), generator=generator
    )
    rows = (corner[0] + torch.arange(H)).to(images.device)  # (N, H)
    cols = (corner[1] + torch.arange(W)).to(images.device)  # (N, W)
    n = torch.arange(N, device=images.device)[:, None, None]
    window = padded.permute(0, 2, 3, 1)[
        n, rows[:, :, None], cols[:, None]
    ]
    return window.permute(0, 3, 1, 2)  # (N, C, H, W)


def _check_generator(generator: object) -> None:
    """Raise unless ``generator`` is ``None`` or a ``torch.Generator``."""
    if generator is not None and not isinstance(
        generator, torch.Generator
    ):
        raise TypeError(
            "generator must be None or a torch.Generator, got "
            f"{type(generator).__name__}"
        )


class PatchEmbedding(nn.Module):
    """Cut images into patches and project each one to the model width.

    One ``torch.nn.Linear`` reads each flattened patch (see
    :func:`patchify`): ``x_p E + b``, the ViT paper's patch embedding. It
    is a convolution whose kernel is as large as its stride, so that the
    kernel sees every patch once and the patches do not overlap;
    :meth:`as_conv2d` returns that ``Conv2d``, with the same weights.

    Parameters
    ----------
    patch
        Side of the square patches, in pixels.
    channels
        Channels ``C`` of the images.
    d_model
        Model width ``D``.

    Shape
    -----
    - Input: ``(N, C, H, W)``, ``H`` and ``W`` multiples of ``patch``.
    - Output: ``(N, P, D)``, one token per patch in reading order,
      ``P = (H / patch) * (W / patch)``.

    where ``N`` is the number of images and ``P`` the number of patches.

    Raises
    ------
    TypeError
        If a size is not an integer.
    ValueError
        If a size is smaller than 1.

    Examples
    --------
    >>> embed = PatchEmbedding(patch=2, channels=1, d_model=16)
    >>> embed(torch.rand(3, 1, 8, 8)).shape
    torch.Size([3, 16, 16])
    >>> embed.as_conv2d()
    Conv2d(1, 16, kernel_size=(2, 2), stride=(2, 2))
    """

    def __init__(self, patch: int, channels: int, d_model: int) -> None:
        super().__init__()
        self.patch = check_int(patch, "patch", minimum=1)
        self.channels = check_int(channels, "channels", minimum=1)
        self.d_model = check_int(d_model, "d_model", minimum=1)
        self.proj = nn.Linear(channels * patch * patch, d_model)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """Embed every patch of ``images``: ``(N, C, H, W) -> (N, P, D)``."""
        images = self._check(images)
        return self.proj(_patchify(images, self.patch))  # (N, P, D)

    def _check(self, images: object) -> torch.Tensor:
        """Return ``images`` if they fit the module (channels, size, dtype)."""
        images = _check_images(images, "images", self.patch)
        if images.shape[1] != self.channels:
            raise ValueError(
                f"images must have {self.channels} channel(s), got shape "
                f"{tuple(images.shape)}"
            )
        check_like(
            images,
            "images",
            like=self.proj.weight,
            like_name="the module's parameters",
        )
        return images

    def as_conv2d(self) -> nn.Conv2d:
        """Return the ``Conv2d`` (kernel = stride = ``patch``) that computes the same map.

        Its weight is this module's, reshaped from ``(D, C * patch * patch)``
        to ``(D, C, patch, patch)``; its bias is the same. Its output
        ``(N, D, H / patch, W / patch)``, flattened over the last two axes
        and transposed, is this module's ``(N, P, D)``.

        Returns
        -------
        torch.nn.Conv2d
            A new convolution, with copies of the weights, on this module's
            device and with its dtype.

        Examples
        --------
        >>> embed = PatchEmbedding(patch=4, channels=3, d_model=8).double()
        >>> images = torch.rand(2, 3, 8, 8, dtype=torch.float64)
        >>> with torch.no_grad():
        ...     maps = embed.as_conv2d()(images)  # (N, D, 2, 2)
        ...     as_tokens = maps.flatten(2).transpose(1, 2)  # (N, P, D)
        ...     difference = (as_tokens - embed(images)).abs().max()
        >>> float(difference) < 1e-12
        True
        """
        weight = self.proj.weight
        conv = nn.Conv2d(
            self.channels,
            self.d_model,
            kernel_size=self.patch,
            stride=self.patch,
            device=weight.device,
            dtype=weight.dtype,
        )
        bias = conv.bias
        assert bias is not None  # a Conv2d has one unless told otherwise
        with torch.no_grad():
            conv.weight.copy_(weight.reshape(conv.weight.shape))
            bias.copy_(self.proj.bias)
        return conv


# --------------------------------------------------------------------------
# The Vision Transformer
# --------------------------------------------------------------------------


class VisionTransformer(nn.Module):
    """A Vision Transformer: patch embedding, class token, positions, encoder, head.

    The ViT paper's equations 1 to 4 (Dosovitskiy et al., 2021), with the
    book's pre-norm :class:`lessons_code.blocks.Encoder`::

        z_0 = [x_class; x_1 E; ...; x_P E] + E_pos    # (B, P + 1, D)
        z_l = encoder block l of z_(l-1)             # l = 1, ..., L
        y   = LN(z_L[0])                             # the class token
        logits = y W_head + b_head

    where each pre-norm block computes ``z' = z + MSA(LN(z))`` and
    ``z_l = z' + MLP(LN(z'))``. The blocks' feed-forward network is the
    book's :class:`lessons_code.blocks.FeedForward`, with a ReLU where the
    paper's MLP has a GELU. The class token and the position table (one
    row per token, the class token's first) are learned, drawn at first
    from a normal distribution with standard deviation 0.02.

    Parameters
    ----------
    image_size
        Side of the square images, a multiple of ``patch``.
    patch
        Side of the square patches.
    channels
        Channels ``C`` of the images.
    num_classes
        Number of classes.
    d_model
        Model width ``D``.
    num_layers
        Number of encoder blocks ``L``.
    num_heads
        Attention heads ``H`` per block; it must divide ``D``.
    d_ff
        Hidden width of each block's feed-forward network.
    positions
        Add the learned position table (``False``: the encoder sees the
        patches as an unordered set, see :func:`shuffle_patches`).
    layer_norm_eps
        Epsilon of every LayerNorm.

    Shape
    -----
    - Input: ``(B, C, image_size, image_size)``.
    - Output: logits ``(B, num_classes)``.

    where ``B`` is the batch size.

    Raises
    ------
    TypeError
        If a size is not an integer or ``positions`` not a bool.
    ValueError
        If a size is smaller than 1, ``patch`` does not divide
        ``image_size`` or ``num_heads`` does not divide ``d_model``.

    Attributes
    ----------
    patch_embedding : PatchEmbedding
        The patches' linear projection ``E``.
    class_token : torch.nn.Parameter
        ``x_class``, ``(1, 1, D)``.
    position_table : torch.nn.Parameter or None
        ``E_pos``, ``(P + 1, D)``; ``None`` without positions.
    encoder : lessons_code.blocks.Encoder
        ``L`` pre-norm blocks and the final LayerNorm.
    head : torch.nn.Linear
        The classifier, ``D -> num_classes``.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> vit = VisionTransformer(image_size=8, patch=2, d_model=16, num_heads=2, d_ff=32)
    >>> vit(torch.rand(5, 1, 8, 8)).shape
    torch.Size([5, 10])
    >>> vit.num_patches, tuple(vit.position_table.shape)
    (16, (17, 16))
    """

    def __init__(
        self,
        image_size: int = 8,
        patch: int = 2,
        *,
        channels: int = 1,
        num_classes: int = 10,
        d_model: int = 32,
        num_layers: int = 2,
        num_heads: int = 4,
        d_ff: int = 64,
        positions: bool = True,
        layer_norm_eps: float = 1e-5,
    ) -> None:
        super().__init__()
        self.image_size = check_int(image_size, "image_size", minimum=1)
        self.patch = check_int(patch, "patch", minimum=1)
        if image_size % patch:
            raise ValueError(
                f"patch must divide image_size = {image_size}, got {patch}"
            )
        self.num_classes = check_int(
            num_classes, "num_classes", minimum=1
        )
        self.positions = check_bool(positions, "positions")
        self.grid = image_size // patch  # patches per row and per column
        self.num_patches = self.grid * self.grid
        self.patch_embedding = PatchEmbedding(patch, channels, d_model)
        self.class_token = nn.Parameter(0.02 * torch.randn(1, 1, d_model))
        self.position_table = (
            nn.Parameter(
                0.02 * torch.randn(self.num_patches + 1, d_model)
            )
            if positions
            else None
        )
        self.encoder = Encoder(
            num_layers,
            d_model,
            num_heads,
            d_ff,
            norm_first=True,  # pre-norm, as ViTs are
            final_norm=True,  # the LN of y = LN(z_L[0])
            layer_norm_eps=layer_norm_eps,
        )
        self.head = nn.Linear(d_model, num_classes)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """Classify ``images`` ``(B, C, H, W)``: logits ``(B, num_classes)``."""
        images = self._check(images)
        B = images.shape[0]

        x = self.patch_embedding(images)  # (B, P, D): a token per patch
        x_class = self.class_token.expand(B, 1, -1)  # (B, 1, D)
        x = torch.cat([x_class, x], dim=1)  # (B, P + 1, D)
        if self.position_table is not None:
            x = x + self.position_table  # (B, P + 1, D)
        x = self.encoder(x)  # (B, P + 1, D): L blocks, final LayerNorm
        return self.head(x[:, 0])  # (B, classes): the class token

    def _check(self, images: object) -> torch.Tensor:
        """Return ``images`` if they are ``(B, C, image_size, image_size)``."""
        images = self.patch_embedding._check(images)
        if images.shape[-2:] != (self.image_size, self.image_size):
            raise ValueError(
                f"images must be {self.image_size} x {self.image_size}, "
                f"got shape {tuple(images.shape)}"
            )
        return images

    def attention_weights(
        self, images: torch.Tensor
    ) -> list[torch.Tensor]:
        """Return every block's attention weights for ``images``.

        Runs the model once and records what each block's self-attention
        read (its LayerNorm's output), then recomputes that attention with
        ``return_weights=True``. Row 0 of each layer's weights is the class
        token's attention: column 0 is itself, columns ``1, ..., P`` the
        patches in reading order. Call it under ``torch.no_grad()`` unless
        you want gradients.

        Parameters
        ----------
        images
            A batch of images ``(B, C, H, W)``.

        Returns
        -------
        list of torch.Tensor
            One tensor ``(B, H, P + 1, P + 1)`` per block, first block first;
            each row sums to 1.

        Raises
        ------
        TypeError
            If ``images`` is not a floating-point tensor of the parameters'
            dtype.
        ValueError
            If ``images`` does not fit the model.

        Examples
        --------
        >>> vit = VisionTransformer(image_size=8, patch=4, d_model=8, num_heads=2,
        ...                         num_layers=3)
        >>> weights = vit.attention_weights(torch.rand(2, 1, 8, 8))
        >>> len(weights), tuple(weights[0].shape)
        (3, (2, 2, 5, 5))
        """
        images = self._check(images)
        blocks = [
            cast(EncoderBlock, block) for block in self.encoder.layers
        ]
        seen: list[torch.Tensor] = []

        def record(
            module: nn.Module, args: tuple[torch.Tensor, ...]
        ) -> None:
            seen.append(
                args[0]
            )  # the query: the block's normalised input

        hooks = [
            block.self_attn.register_forward_pre_hook(record)
            for block in blocks
        ]
        try:
            self(images)
        finally:
            for hook in hooks:
                hook.remove()
        return [
            block.self_attn(x, x, x, return_weights=True)[1]
            for block, x in zip(blocks, seen, strict=True)
        ]


class PixelMLP(nn.Module):
    """A baseline that reads the flattened pixels: ``Linear -> ReLU -> Linear``.

    Parameters
    ----------
    pixels
        Number of input values (``C * H * W``).
    hidden
        Hidden width.
    num_classes
        Number of classes.

    Shape
    -----
    - Input: ``(B, C, H, W)`` with ``C * H * W = pixels``.
    - Output: logits ``(B, num_classes)``.

    where ``B`` is the batch size, ``C`` the number of channels, ``H``
    and ``W`` the height and width.

    Raises
    ------
    TypeError
        If a size is not an integer.
    ValueError
        If a size is smaller than 1.

    Examples
    --------
    >>> PixelMLP(64, 32)(torch.rand(5, 1, 8, 8)).shape
    torch.Size([5, 10])
    """

    def __init__(
        self, pixels: int = 64, hidden: int = 256, num_classes: int = 10
    ) -> None:
        super().__init__()
        self.pixels = check_int(pixels, "pixels", minimum=1)
        hidden = check_int(hidden, "hidden", minimum=1)
        num_classes = check_int(num_classes, "num_classes", minimum=1)
        self.hidden = nn.Linear(pixels, hidden)
        self.out = nn.Linear(hidden, num_classes)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """Classify ``images``: logits ``(B, num_classes)``."""
        images = check_tensor(images, "images", ndim=4)
        if images[0].numel() != self.pixels:
            raise ValueError(
                f"images must have {self.pixels} values each, got shape "
                f"{tuple(images.shape)}"
            )
        x = images.flatten(1)  # (B, C H W)
        return self.out(F.relu(self.hidden(x)))  # (B, classes)


class TinyCNN(nn.Module):
    """A baseline convolutional network: two 3 x 3 convolutions, pooling, a linear head.

    ``Conv(3x3) -> ReLU -> Conv(3x3) -> ReLU -> MaxPool(2) -> Linear``:
    the convolutions keep the image size (padding 1), the pooling halves
    it, and the head reads every pooled value. Each output value sees a
    neighbourhood of pixels (a 6 x 6 window): locality and translation
    equivariance are built in, which a ViT must learn.

    Parameters
    ----------
    image_size
        Side of the square images, even.
    channels
        Channels of the images.
    width
        Channels of the first convolution; the second has twice as many.
    num_classes
        Number of classes.

    Shape
    -----
    - Input: ``(B, channels, image_size, image_size)``.
    - Output: logits ``(B, num_classes)``.

    where ``B`` is the batch size.

    Raises
    ------
    TypeError
        If a size is not an integer.
    ValueError
        If a size is smaller than 1 or ``image_size`` is odd.

    Examples
    --------
    >>> TinyCNN(width=4)(torch.rand(5, 1, 8, 8)).shape
    torch.Size([5, 10])
    """

    def __init__(
        self,
        image_size: int = 8,
        channels: int = 1,
        width: int = 16,
        num_classes: int = 10,
    ) -> None:
        super().__init__()
        self.image_size = check_int(image_size, "image_size", minimum=2)
        if image_size % 2:
            raise ValueError(
                f"image_size must be even (the pooling halves it), got {image_size}"
            )
        self.channels = check_int(channels, "channels", minimum=1)
        width = check_int(width, "width", minimum=1)
        num_classes = check_int(num_classes, "num_classes", minimum=1)
        self.conv1 = nn.Conv2d(channels, width, 3, padding=1)
        self.conv2 = nn.Conv2d(width, 2 * width, 3, padding=1)
        pooled = (image_size // 2) ** 2
        self.out = nn.Linear(2 * width * pooled, num_classes)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """Classify ``images``: logits ``(B, num_classes)``."""
        images = check_tensor(images, "images", ndim=4)
        expected = (self.channels, self.image_size, self.image_size)
        if tuple(images.shape[1:]) != expected:
            raise ValueError(
                f"images must have shape (B, {', '.join(map(str, expected))}), "
                f"got shape {tuple(images.shape)}"
            )
        x = F.relu(self.conv1(images))  # (B, width, S, S)
        x = F.relu(self.conv2(x))  # (B, 2 width, S, S)
        x = F.max_pool2d(x, 2)  # (B, 2 width, S / 2, S / 2)
        return self.out(x.flatten(1))  # (B, classes)


def parameter_count(model: nn.Module) -> int:
    """Return the number of trained values of ``model`` (every parameter's entries).

    Examples
    --------
    >>> parameter_count(nn.Linear(64, 10))
    650
    """
    if not isinstance(model, nn.Module):
        raise TypeError(
            f"model must be a torch.nn.Module, got {type(model).__name__}"
        )
    return sum(p.numel() for p in model.parameters())


# The lesson's sizes: the three models have about the same number of weights.
_SIZES: dict[str, dict[str, int]] = {
    "vit": {"d_model": 32, "num_layers": 2, "num_heads": 4, "d_ff": 64},
    "mlp": {"hidden": 240},
    "cnn": {"width": 24},
}


def _check_kind(kind: object) -> str:
    """Return ``kind`` if it names one of :data:`MODEL_KINDS`."""
    if not isinstance(kind, str):
        raise TypeError(
            f"kind must be a string, got {type(kind).__name__}"
        )
    if kind not in MODEL_KINDS:
        raise ValueError(
            f"kind must be one of {MODEL_KINDS}, got {kind!r}"
        )
    return kind


def build_digit_model(kind: str = "vit", patch: int = 2) -> nn.Module:
    """Build an untrained model of the lesson's sizes for the 8 x 8 digits.

    ``"vit"``: a :class:`VisionTransformer` with ``D = 32``, 2 blocks of 4
    heads and a feed-forward width of 64; ``"vit_no_positions"``: the same
    without its position table; ``"mlp"``: a :class:`PixelMLP` with 240
    hidden units; ``"cnn"``: a :class:`TinyCNN` of width 24. Their
    parameter counts are close (see :func:`parameter_count`).

    Parameters
    ----------
    kind
        One of ``MODEL_KINDS``.
    patch
        Patch size of the two ViTs (2 or 4 for 8 x 8 images); the MLP and
        the CNN read whole images and ignore it.

    Returns
    -------
    torch.nn.Module
        The model, drawn from PyTorch's global generator (see
        :func:`lessons_code.training.seeded`).

    Raises
    ------
    TypeError
        If ``kind`` is not a string or ``patch`` not an integer.
    ValueError
        If ``kind`` names no model or ``patch`` does not divide 8.

    Examples
    --------
    >>> {kind: parameter_count(build_digit_model(kind)) for kind in MODEL_KINDS}
    {'vit': 18218, 'vit_no_positions': 17674, 'mlp': 18010, 'cnn': 18346}
    """
    kind = _check_kind(kind)
    patch = check_int(patch, "patch", minimum=1)
    if kind == "mlp":
        return PixelMLP(64, **_SIZES["mlp"])
    if kind == "cnn":
        return TinyCNN(8, 1, **_SIZES["cnn"])
    return VisionTransformer(
        8, patch, positions=kind == "vit", **_SIZES["vit"]
    )


# --------------------------------------------------------------------------
# Training and evaluation
# --------------------------------------------------------------------------


def _fit(
    model: nn.Module,
    images: torch.Tensor,
    labels: torch.Tensor,
    *,
    epochs: int,
    batch_size: int,
    lr: float,
    weight_decay: float,
    warmup_steps: int,
    shift: int,
    generator: torch.Generator,
) -> np.ndarray:
    """:func:`fit` without the checks: the training loop."""
    steps = epochs * math.ceil(len(labels) / batch_size)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=lr, weight_decay=weight_decay
    )
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda step: warmup_cosine(step, warmup_steps, steps, 0.0),
    )
    losses = []
    model.train()
    for _ in range(epochs):
        order = torch.randperm(len(labels), generator=generator)
        for batch in order.split(batch_size):  # minibatches of indices
            x = images[batch]  # (b, C, H, W)
            if shift:
                x = _random_shift(x, shift, generator)
            logits = model(x)  # (b, classes)
            loss = F.cross_entropy(logits, labels[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            losses.append(loss.item())
    model.eval()
    return np.array(losses)


def fit(
    model: nn.Module,
    images: torch.Tensor,
    labels: torch.Tensor,
    *,
    epochs: int = 30,
    batch_size: int = 64,
    lr: float = 3e-3,
    weight_decay: float = 0.01,
    warmup_steps: int = 50,
    shift: int = 0,
    seed: int = 0,
) -> np.ndarray:
    """Train ``model`` to classify ``images`` with cross-entropy; return the losses.

    AdamW at a peak rate ``lr`` (reached linearly over ``warmup_steps``
    steps, then falling to 0 along a cosine,
    :func:`lessons_code.training.warmup_cosine`); each epoch visits the
    images once, in minibatches of ``batch_size`` in a new random order
    (the last minibatch of an epoch is smaller if ``batch_size`` does not
    divide the number of images). The model is trained in place and left
    in evaluation mode.

    Parameters
    ----------
    model
        The classifier: images in, logits ``(b, classes)`` out.
    images
        The training images, on the model's device.
    labels
        Their int64 classes, on the same device.
    epochs
        Passes over the images.
    batch_size
        Images per step.
    lr
        Peak learning rate (positive).
    weight_decay
        AdamW's decoupled weight decay (on every parameter).
    warmup_steps
        Steps of the linear warm-up, fewer than the number of steps.
    shift
        Largest random translation of a training image, in pixels (see
        :func:`random_shift`); 0 trains on the images as they are.
    seed
        Seed of the minibatches' order and of the shifts.

    Returns
    -------
    numpy.ndarray
        The loss of every step, ``(epochs * ceil(N / batch_size),)``.

    Shape
    -----
    ``images``: ``(N, C, H, W)``; ``labels``: ``(N,)``.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If a count is too small, ``lr`` is not positive, ``weight_decay``
        is negative, the shapes do not fit or the warm-up is not shorter
        than the training.

    Examples
    --------
    >>> data = load_digits_split()
    >>> model = seeded(0, lambda: PixelMLP(64, 32))
    >>> losses = fit(model, data.train_images, data.train_labels, epochs=2,
    ...              warmup_steps=5)
    >>> losses.shape  # 2 epochs of 21 minibatches
    (42,)
    >>> evaluate(model, data.test_images, data.test_labels) > 0.5
    True
    """
    if not isinstance(model, nn.Module):
        raise TypeError(
            f"model must be a torch.nn.Module, got {type(model).__name__}"
        )
    images, labels = _check_labelled(images, labels)
    epochs = check_int(epochs, "epochs", minimum=1)
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    lr = check_real(lr, "lr", strict=True)
    weight_decay = check_real(weight_decay, "weight_decay")
    warmup_steps = check_int(warmup_steps, "warmup_steps", minimum=1)
    shift = check_int(shift, "shift", minimum=0)
    seed = check_int(seed, "seed", minimum=0)
    steps = epochs * math.ceil(len(labels) / batch_size)
    if warmup_steps >= steps:
        raise ValueError(
            f"warmup_steps must be fewer than the {steps} steps of the "
            f"training, got {warmup_steps}"
        )
    return _fit(
        model,
        images,
        labels,
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        weight_decay=weight_decay,
        warmup_steps=warmup_steps,
        shift=shift,
        generator=torch.Generator().manual_seed(seed),
    )


def _check_labelled(
    images: object, labels: object
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return ``images`` ``(N, C, H, W)`` and int64 ``labels`` ``(N,)`` if they fit."""
    images = check_tensor(images, "images", ndim=4)
    if (
        not isinstance(labels, torch.Tensor)
        or labels.dtype != torch.int64
    ):
        raise TypeError(
            "labels must be an int64 torch.Tensor, got "
            + (
                f"dtype {labels.dtype}"
                if isinstance(labels, torch.Tensor)
                else type(labels).__name__
            )
        )
    if labels.shape != images.shape[:1]:
        raise ValueError(
            f"labels must have shape ({images.shape[0]},), one per image, "
            f"got shape {tuple(labels.shape)}"
        )
    if len(labels) == 0:
        raise ValueError("images must hold at least one image, got none")
    if labels.device != images.device:
        raise ValueError(
            f"labels must be on the device of images ({images.device}), "
            f"got {labels.device}"
        )
    return images, labels


def evaluate(
    model: nn.Module, images: torch.Tensor, labels: torch.Tensor
) -> float:
    """Return the fraction of ``images`` whose highest logit is at their label.

    Parameters
    ----------
    model
        The classifier.
    images
        Images ``(N, C, H, W)`` on the model's device.
    labels
        Their int64 classes ``(N,)``.

    Returns
    -------
    float
        The accuracy, in ``[0, 1]``.

    Raises
    ------
    TypeError
        If ``model`` is not a module or the tensors have the wrong dtype.
    ValueError
        If the shapes do not fit or the tensors are on different devices.

    Examples
    --------
    >>> model = seeded(0, lambda: PixelMLP(64, 8))
    >>> images, labels = torch.rand(4, 1, 8, 8), torch.tensor([0, 1, 2, 3])
    >>> 0.0 <= evaluate(model, images, labels) <= 1.0
    True
    """
    if not isinstance(model, nn.Module):
        raise TypeError(
            f"model must be a torch.nn.Module, got {type(model).__name__}"
        )
    images, labels = _check_labelled(images, labels)
    with torch.no_grad():
        predicted = model(images).argmax(dim=-1)  # (N,)
    return float((predicted == labels).double().mean())


@dataclass(frozen=True)
class DigitExperiment:
    """What :func:`train_digit_model` returns.

    Attributes
    ----------
    kind
        The model, one of ``MODEL_KINDS``.
    seed
        The seed of the initial weights and of the minibatches.
    settings
        Every other argument of the call, by name (``device`` as a string).
    model
        The trained model (CPU, float32, evaluation mode).
    parameters
        Its number of parameters (:func:`parameter_count`).
    losses
        The training loss at every step, ``(steps,)``.
    test_accuracy
        Accuracy on the 500 test images of :func:`load_digits_split`.
    test_predictions
        The predicted digit of each test image, int64 ``(500,)``.
    train_seconds
        Wall-clock seconds of the training. It differs between runs,
        unlike everything else; a result read back by
        :func:`lessons_code.results.stored` keeps the seconds of the call
        that trained it.
    """

    kind: str
    seed: int
    settings: dict[str, int | float | str]
    model: nn.Module
    parameters: int
    losses: np.ndarray
    test_accuracy: float
    test_predictions: np.ndarray
    train_seconds: float


@stored
def train_digit_model(
    kind: str = "vit",
    seed: int = 0,
    *,
    patch: int = 2,
    epochs: int = 30,
    batch_size: int = 64,
    lr: float = 3e-3,
    weight_decay: float = 0.01,
    warmup_steps: int = 50,
    shift: int = 0,
    device: torch.device | str | None = None,
) -> DigitExperiment:
    """Train one of the lesson's models on the digits' training split and test it.

    The model of :func:`build_digit_model` is drawn with ``seed``
    (:func:`lessons_code.training.seeded`) and trained by :func:`fit`;
    every kind gets the same recipe and the same number of steps. The
    defaults train the ViT in a few seconds on one CPU thread.

    Deterministic for a given seed, device, PyTorch version and thread
    count. With ``LESSONS_CODE_RESULTS`` set, the result is saved and a
    later call with the same arguments reads it
    (:func:`lessons_code.results.stored`).

    Parameters
    ----------
    kind
        One of ``MODEL_KINDS``: ``"vit"``, ``"vit_no_positions"``,
        ``"mlp"`` or ``"cnn"``.
    seed
        Seed of the initial weights and of the minibatches.
    patch
        Patch size of the ViTs (the MLP and the CNN ignore it).
    epochs, batch_size, lr, weight_decay, warmup_steps, shift
        The training (see :func:`fit`).
    device
        Where to train (default: the CPU); the returned model is on the
        CPU.

    Returns
    -------
    DigitExperiment
        The trained model, its loss curve, its test accuracy and
        predictions, and the training time.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If ``kind`` names no model, a count is too small, ``lr`` is not
        positive or ``patch`` does not divide 8.

    Examples
    --------
    >>> run = train_digit_model("cnn", epochs=1, warmup_steps=5)
    >>> run.losses.shape, run.parameters, run.test_predictions.shape
    ((21,), 18346, (500,))
    """
    kind = _check_kind(kind)
    seed = check_int(seed, "seed", minimum=0)
    device = check_device(device, "device")
    settings: dict[str, int | float | str] = {
        "patch": patch,
        "epochs": epochs,
        "batch_size": batch_size,
        "lr": lr,
        "weight_decay": weight_decay,
        "warmup_steps": warmup_steps,
        "shift": shift,
        "device": str(device),
    }
    data = load_digits_split()
    model = seeded(seed, lambda: build_digit_model(kind, patch)).to(
        device
    )
    began = time.perf_counter()
    losses = fit(
        model,
        data.train_images.to(device),
        data.train_labels.to(device),
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        weight_decay=weight_decay,
        warmup_steps=warmup_steps,
        shift=shift,
        seed=seed,
    )
    train_seconds = time.perf_counter() - began
    model = model.cpu().eval()
    with torch.no_grad():
        predicted = model(data.test_images).argmax(dim=-1)
    return DigitExperiment(
        kind=kind,
        seed=seed,
        settings=settings,
        model=model,
        parameters=parameter_count(model),
        losses=losses,
        test_accuracy=float(
            (predicted == data.test_labels).double().mean()
        ),
        test_predictions=predicted.numpy(),
        train_seconds=train_seconds,
    )


# --------------------------------------------------------------------------
# What the model learned
# --------------------------------------------------------------------------


def attention_rollout(attentions: Sequence[torch.Tensor]) -> torch.Tensor:
    """Combine the attention weights of all layers into one map per image (attention rollout).

    Abnar & Zuidema (2020): each layer's weights are averaged over the
    heads, the identity is added for the residual connection that carries
    every token past the attention, and each row is divided by its sum;
    the layers' matrices are then multiplied, first layer rightmost. Entry
    ``(i, j)`` estimates how much of token ``j``'s input reaches token
    ``i`` at the output, if the attention weights (with the residual as
    the identity, half and half) were the only mixing. It is a quantitative
    estimate under that assumption, not a measure of what the model uses:
    it ignores the feed-forward networks, the LayerNorms and the values
    that the weights mix.

    Parameters
    ----------
    attentions
        Each layer's weights, first layer first, as
        :meth:`VisionTransformer.attention_weights` returns them.

    Returns
    -------
    torch.Tensor
        The rollout ``(B, T, T)``; each row sums to 1. Row 0 of a ViT's is
        the class token's: ``rollout[:, 0, 1:]`` weighs the patches, and
        ``rollout[:, 0, 0]`` is the weight the class token keeps on itself,
        so the patch weights sum to 1 minus it.

    Shape
    -----
    - ``attentions``: a sequence of ``(B, H, T, T)`` tensors.
    - Output: ``(B, T, T)``.

    where ``B`` is the batch size, ``H`` the number of heads and ``T`` the
    number of tokens.

    Raises
    ------
    TypeError
        If ``attentions`` is not a sequence of floating-point tensors.
    ValueError
        If it is empty, or the tensors are not ``(B, H, T, T)`` of one shape.

    Examples
    --------
    >>> uniform = torch.full((1, 2, 3, 3), 1 / 3)
    >>> attention_rollout([uniform])[0]
    tensor([[0.6667, 0.1667, 0.1667],
            [0.1667, 0.6667, 0.1667],
            [0.1667, 0.1667, 0.6667]])
    """
    if isinstance(attentions, torch.Tensor) or not isinstance(
        attentions, Sequence
    ):
        raise TypeError(
            "attentions must be a sequence (e.g. a list) of tensors, got "
            f"{type(attentions).__name__}"
        )
    if len(attentions) == 0:
        raise ValueError(
            "attentions must hold at least one layer, got none"
        )
    first = check_tensor(attentions[0], "attentions[0]", ndim=4)
    T = first.shape[-1]
    if first.shape[-2] != T:
        raise ValueError(
            f"attentions[0] must be square in its last two axes (B, H, T, T), "
            f"got shape {tuple(first.shape)}"
        )
    for i, weights in enumerate(attentions):
        weights = check_tensor(weights, f"attentions[{i}]", ndim=4)
        if weights.shape != first.shape:
            raise ValueError(
                f"attentions[{i}] must have the shape of attentions[0] "
                f"{tuple(first.shape)}, got {tuple(weights.shape)}"
            )
    return _rollout(attentions)


def _rollout(attentions: Sequence[torch.Tensor]) -> torch.Tensor:
    """:func:`attention_rollout` without the checks."""
    first = attentions[0]
    T = first.shape[-1]
    identity = torch.eye(T, dtype=first.dtype, device=first.device)
    rollout = identity.expand(first.shape[0], T, T)  # (B, T, T)
    for weights in attentions:
        a = weights.mean(dim=1) + identity  # (B, T, T): heads, residual
        a = a / a.sum(dim=-1, keepdim=True)  # rows sum to 1
        rollout = a @ rollout  # this layer after the ones below
    return rollout


def position_similarity(model: VisionTransformer) -> torch.Tensor:
    """Cosine similarity of each patch's learned position embedding to every other's.

    The ViT paper's Figure 7 (centre): for the patch in row ``r`` and
    column ``c``, ``similarity[r, c]`` is a ``grid x grid`` image whose
    pixel ``(r2, c2)`` is the cosine similarity of the two patches'
    position embeddings (the class token's row of the table is left out).

    Parameters
    ----------
    model
        A :class:`VisionTransformer` with a position table.

    Returns
    -------
    torch.Tensor
        float32 ``(grid, grid, grid, grid)`` on the CPU, values in
        ``[-1, 1]``; ``similarity[r, c, r, c] = 1``.

    Raises
    ------
    TypeError
        If ``model`` is not a :class:`VisionTransformer`.
    ValueError
        If it has no position table.

    Examples
    --------
    >>> similarity = position_similarity(VisionTransformer(8, 2, d_model=8, num_heads=2))
    >>> similarity.shape
    torch.Size([4, 4, 4, 4])
    >>> round(float(similarity[1, 2, 1, 2]), 6)
    1.0
    """
    if not isinstance(model, VisionTransformer):
        raise TypeError(
            f"model must be a VisionTransformer, got {type(model).__name__}"
        )
    if model.position_table is None:
        raise ValueError(
            "model must have a position table, got a model built with "
            "positions=False"
        )
    with torch.no_grad():
        table = model.position_table[1:].float().cpu()  # (P, D), no class
        unit = F.normalize(table, dim=-1)  # each row of length 1
        cosine = unit @ unit.T  # (P, P)
    g = model.grid
    return cosine.reshape(g, g, g, g)


def _check_similarity(similarity: object) -> torch.Tensor:
    """Return ``similarity`` if it is ``(rows, cols, rows, cols)`` with 2+ patches."""
    similarity = check_tensor(similarity, "similarity", ndim=4)
    rows, cols = similarity.shape[:2]
    if similarity.shape[2:] != (rows, cols) or rows * cols < 2:
        raise ValueError(
            "similarity must have shape (rows, cols, rows, cols) with at "
            f"least 2 patches, got shape {tuple(similarity.shape)}"
        )
    return similarity


def neighbour_fraction(similarity: torch.Tensor) -> float:
    """Fraction of patches whose most similar other patch is a grid neighbour.

    A neighbour is a patch next to it in its row or its column (one step
    left, right, up or down). If position embeddings held no layout, the
    most similar patch would be a neighbour about as often as a patch
    drawn at random (:func:`neighbour_chance`).

    Parameters
    ----------
    similarity
        Similarities as :func:`position_similarity` returns them.

    Returns
    -------
    float
        The fraction, in ``[0, 1]``.

    Shape
    -----
    ``similarity``: ``(rows, cols, rows, cols)``.

    Raises
    ------
    TypeError
        If ``similarity`` is not a floating-point tensor.
    ValueError
        If it is not ``(rows, cols, rows, cols)`` with at least 2 patches.

    Examples
    --------
    >>> rows, cols = torch.meshgrid(torch.arange(3.0), torch.arange(3.0), indexing="ij")
    >>> where = torch.stack([rows, cols], -1)  # (3, 3, 2)
    >>> distance = (where[:, :, None, None] - where[None, None]).abs().sum(-1)
    >>> neighbour_fraction(-distance)  # the nearest patch is always a neighbour
    1.0
    """
    similarity = _check_similarity(similarity)
    rows, cols = similarity.shape[:2]
    P = rows * cols
    flat = similarity.reshape(P, P).clone()
    flat.fill_diagonal_(-torch.inf)  # not itself
    nearest = flat.argmax(dim=1)  # (P,)
    here = torch.arange(P)
    steps = (here // cols - nearest // cols).abs() + (
        here % cols - nearest % cols
    ).abs()
    return float((steps == 1).double().mean())


def neighbour_chance(rows: int, cols: int) -> float:
    """Return the :func:`neighbour_fraction` expected if each patch's match were drawn at random.

    The mean, over the patches, of their number of grid neighbours
    divided by the ``rows * cols - 1`` other patches.

    Parameters
    ----------
    rows, cols
        Size of the grid of patches (at least 2 patches in all).

    Returns
    -------
    float
        The chance level, in ``[0, 1]``.

    Raises
    ------
    TypeError
        If a size is not an integer.
    ValueError
        If a size is smaller than 1, or the grid has a single patch.

    Examples
    --------
    >>> neighbour_chance(4, 4)  # 48 neighbours over 16 patches, each of 15 others
    0.2
    """
    rows = check_int(rows, "rows", minimum=1)
    cols = check_int(cols, "cols", minimum=1)
    P = rows * cols
    if P < 2:
        raise ValueError(
            f"the grid must have at least 2 patches, got {rows} x {cols}"
        )
    # each adjacent pair counts once for each of its two patches
    pairs = rows * (cols - 1) + cols * (rows - 1)
    return 2 * pairs / (P * (P - 1))
