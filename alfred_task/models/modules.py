"""Building blocks of ALFRED's Seq2Seq (§6.2): attention, visual encoder, mask decoder.

Attribute names (and their definition order) are those of ALFRED's ``models/nn/vnn.py``, so
the composed model's ``state_dict`` keys equal the official ones; the code is our own.
"""

from __future__ import annotations

from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

#: ResNet-18 conv feature map fed to the visual encoder (channels, height, width)
FEAT_SHAPE = (512, 7, 7)
#: mask decoder's first feature map (channels, height, width), upsampled 5 times ×2 -> 224
MASK_HSHAPE = (64, 7, 7)
#: sub-cell mask head (``subcell=True``): each 7×7 cell is split into SUBCELL×SUBCELL logits (28×28)
SUBCELL = 4
#: width of its per-cell keys and per-sub-cell queries
SUBCELL_DKEY = 32


class SelfAttn(nn.Module):
    """Attention pooling: one scalar score per token, softmax over time, weighted sum.

    ALFRED does not mask padding (padded encoder outputs are zero and still score); pass
    `valid` [B, L] bool to leave padding out.
    """

    def __init__(self, dhid: int) -> None:
        super().__init__()
        self.scorer = nn.Linear(dhid, 1)

    def forward(self, inp: torch.Tensor, valid: Optional[torch.Tensor] = None) -> torch.Tensor:
        """inp [B, L, D] -> [B, D]."""
        scores = F.softmax(_masked(self.scorer(inp), valid), dim=1)
        return (scores * inp).sum(1)


def _masked(scores: torch.Tensor, valid: Optional[torch.Tensor]) -> torch.Tensor:
    """Scores [B, L, 1] with invalid positions at -inf (unchanged when `valid` is None)."""
    if valid is None:
        return scores
    return scores.masked_fill(~valid.unsqueeze(2), float("-inf"))


def dot_attn(
    inp: torch.Tensor, h: torch.Tensor, valid: Optional[torch.Tensor] = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Dot-product attention of query h [B, D] over inp [B, L, D] -> (weighted [B, D], weights [B, L, 1])."""
    score = F.softmax(_masked(inp.bmm(h.unsqueeze(2)), valid), dim=1)
    return (score * inp).sum(1), score


class ResnetVisualEncoder(nn.Module):
    """512×7×7 ResNet conv features -> `dframe`-d vector (two 1×1 conv+BN+ReLU, then Linear)."""

    def __init__(self, dframe: int) -> None:
        super().__init__()
        c, h, w = FEAT_SHAPE
        self.dframe = dframe
        self.flattened_size = 64 * h * w
        self.conv1 = nn.Conv2d(c, 256, kernel_size=1, stride=1, padding=0)
        self.conv2 = nn.Conv2d(256, 64, kernel_size=1, stride=1, padding=0)
        self.fc = nn.Linear(self.flattened_size, dframe)
        self.bn1 = nn.BatchNorm2d(256)
        self.bn2 = nn.BatchNorm2d(64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x [B, 512, 7, 7] -> [B, dframe]."""
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        return self.fc(x.reshape(-1, self.flattened_size))


class MaskDecoder(nn.Module):
    """Decoder state -> interaction-mask logits [B, pframe, pframe] (7 -> 224 by upsampling and
    transposed convs, then a bilinear resize to `pframe`).

    ``spatial=True`` (not ALFRED's; adds ``vis_conv``/``vis_film``, official keys unchanged) also
    feeds the frame's 512×7×7 features into the first 64×7×7 map: a 1×1 conv of the features,
    scaled and shifted per channel by the decoder state (FiLM), is added before the first ReLU.
    Why: ALFRED's decoder sees the frame only through the decoder state, a vector, so where the
    named object is must survive a Linear flattening of the 7×7 map; the lite model fitted
    PickupObject masks on its own train frames in under a third of cases
    (docs/logs/alfred_seq2seq_experiments.md).

    ``subcell=True`` (not ALFRED's; adds ``sub_key``/``sub_query``) adds a 28×28 logit map, bilinearly
    resized, to the output: every 7×7 cell's features give a key (1×1 conv), the decoder state gives
    one query per 4×4 sub-cell position, and a sub-cell's logit is their scaled dot product. Why: a
    pickup target (~1,200 px at 300²) is smaller than one cell; the FiLM path squeezes the 512
    channels into 64 before any position inside a cell is decided, whereas here the state asks the
    full features "is the named object in this part of the cell", the question the thor_lite
    encoder was trained to answer (a 28×28 object-type lattice from the same 7×7 map).
    """

    def __init__(
        self, dhid: int, pframe: int = 300, spatial: bool = False, subcell: bool = False
    ) -> None:
        super().__init__()
        self.pframe = pframe
        self.d1 = nn.Linear(dhid, MASK_HSHAPE[0] * MASK_HSHAPE[1] * MASK_HSHAPE[2])
        self.upsample = nn.UpsamplingNearest2d(scale_factor=2)
        self.bn2 = nn.BatchNorm2d(32)
        self.bn1 = nn.BatchNorm2d(16)
        self.dconv3 = nn.ConvTranspose2d(64, 32, kernel_size=4, stride=2, padding=1)
        self.dconv2 = nn.ConvTranspose2d(32, 16, kernel_size=4, stride=2, padding=1)
        self.dconv1 = nn.ConvTranspose2d(16, 1, kernel_size=4, stride=2, padding=1)
        self.spatial = bool(spatial)
        if self.spatial:
            self.vis_conv = nn.Conv2d(FEAT_SHAPE[0], MASK_HSHAPE[0], kernel_size=1)
            self.vis_film = nn.Linear(dhid, 2 * MASK_HSHAPE[0])
        self.subcell = bool(subcell)
        if self.subcell:
            self.sub_key = nn.Conv2d(FEAT_SHAPE[0], SUBCELL_DKEY, kernel_size=1)
            self.sub_query = nn.Linear(dhid, SUBCELL * SUBCELL * SUBCELL_DKEY)

    @property
    def reads_frame(self) -> bool:
        """Whether `forward` needs the frame's features."""
        return self.spatial or self.subcell

    def forward(self, state: torch.Tensor, frame: Optional[torch.Tensor] = None) -> torch.Tensor:
        """state [B, dhid] (and, when `reads_frame`, the frame's features [B, 512, 7, 7]) -> logits [B, pframe, pframe]."""
        x = self.d1(state).view(-1, *MASK_HSHAPE)
        if self.reads_frame and (
            frame is None or frame.shape[1:] != FEAT_SHAPE or len(frame) != len(x)
        ):
            raise ValueError(
                f"a frame-reading mask decoder needs the frames [{len(x)}, 512, 7, 7], got "
                f"{None if frame is None else list(frame.shape)}"
            )
        if self.spatial:
            gamma, beta = self.vis_film(state).unsqueeze(-1).unsqueeze(-1).chunk(2, dim=1)
            x = x + self.vis_conv(frame) * (1.0 + gamma) + beta
        x = F.relu(x)
        x = F.relu(self.bn2(self.dconv3(self.upsample(x))))
        x = F.relu(self.bn1(self.dconv2(self.upsample(x))))
        x = F.interpolate(
            self.dconv1(x), size=(self.pframe, self.pframe), mode="bilinear", align_corners=False
        )
        if self.subcell:
            x = x + F.interpolate(
                self._subcell_logits(state, frame),
                size=(self.pframe, self.pframe),
                mode="bilinear",
                align_corners=False,
            )
        return x[:, 0]

    def _subcell_logits(self, state: torch.Tensor, frame: torch.Tensor) -> torch.Tensor:
        """[B, 1, 28, 28]: per 7×7 cell and sub-cell position, key · query / sqrt(d)."""
        keys = self.sub_key(frame)  # [B, D, 7, 7]
        queries = self.sub_query(state).view(
            len(state), SUBCELL * SUBCELL, SUBCELL_DKEY
        )  # [B, 16, D]
        cells = torch.einsum("bsd,bdhw->bshw", queries, keys) / SUBCELL_DKEY**0.5  # [B, 16, 7, 7]
        return F.pixel_shuffle(cells, SUBCELL)
