"""A mask head beside ALFRED's Seq2Seq that also reads finer visual features (an agent option).

Why: ALFRED's mask decoder decodes the mask from the decoder state alone; on the agent's own
states its pickup masks land on the target about one time in ten, and refitting it on such states
does not carry over to other trajectories (docs/logs/alfred_seq2seq_experiments.md, sessions 20-21). A
pickup target (~1,200 px of 300²) is smaller than one cell of the 7×7 ResNet map. This head keeps
the decoder state as the signal for *which* object and adds the frame's features as FiLM-modulated
skips: the 512×7×7 map (``state+f7``) and the encoder's 256×14×14 layer3 map (``state+f14``).
It is trained outside the policy (`experiments/alfred_masks/mask_probe.py --save-heads`) on masks of the
agent's own states, and the Seq2Seq agent uses it with ``mask_head=<file>``; the policy's weights and
ALFRED's parameter names are untouched. ``type+f14`` (told the target's object type) exists only as
a probe's oracle bound and is refused by the agent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Optional

import torch
from torch import nn

__all__ = ["KINDS", "AGENT_KINDS", "FineMaskHead", "layer3_features", "save_head", "load_head"]

KINDS = ("state", "state+f7", "state+f14", "type+f14")
#: what an agent may use (the type head needs the answer as input)
AGENT_KINDS = ("state", "state+f7", "state+f14")
#: the head's output side; callers resize to the mask resolution they need
OUT_SIDE = 56
FORMAT = "alfred_fine_mask_head/1"


class FineMaskHead(nn.Module):
    """[cond] (+ [512, 7, 7], [256, 14, 14] features) -> [N, 56, 56] logits; see the module doc."""

    def __init__(self, kind: str, cond_dim: int) -> None:
        super().__init__()
        if kind not in KINDS:
            raise ValueError(f"mask head kind {kind!r} is not one of {KINDS}")
        self.kind, self.cond_dim = kind, int(cond_dim)
        self.cond = nn.Sequential(nn.Linear(self.cond_dim, 128), nn.ReLU())
        self.base = nn.Linear(128, 64 * 7 * 7)
        self.f7 = nn.Conv2d(512, 64, 1) if kind == "state+f7" else None
        self.f14 = nn.Conv2d(256, 64, 1) if kind.endswith("f14") else None
        self.film = nn.Linear(128, 128)  # scale and shift of the feature skip
        self.up = nn.ModuleList([nn.ConvTranspose2d(64, 64, 4, 2, 1) for _ in range(3)])
        self.out = nn.Conv2d(64, 1, 3, padding=1)

    def _skip(self, conv: nn.Module, feat: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        gamma, beta = self.film(z).chunk(2, dim=1)
        return conv(feat) * (1 + gamma[:, :, None, None]) + beta[:, :, None, None]

    def forward(
        self,
        cond: torch.Tensor,
        f7: Optional[torch.Tensor] = None,
        f14: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        z = self.cond(cond)
        x = self.base(z).view(-1, 64, 7, 7)
        if self.f7 is not None:
            x = x + self._skip(self.f7, f7, z)
        x = torch.relu(self.up[0](torch.relu(x)))  # 14×14
        if self.f14 is not None:
            x = torch.relu(x + self._skip(self.f14, f14, z))
        x = torch.relu(self.up[1](x))
        return self.out(torch.relu(self.up[2](x)))[:, 0]


@torch.no_grad()
def layer3_features(features, frames: torch.Tensor) -> torch.Tensor:
    """uint8 [N, H, W, 3] frames -> [N, 256, 14, 14]: conv1 .. layer3 of a `ResnetFeatures`
    encoder, on the same 224² normalised input as its 512×7×7 features."""
    x = frames.permute(0, 3, 1, 2).float() / 255.0
    x = torch.nn.functional.interpolate(x, size=(224, 224), mode="bilinear", align_corners=False)
    return features.body[:7]((x - features.mean) / features.std)


def save_head(
    path: Path, head: FineMaskHead, encoder: Dict[str, Any], meta: Dict[str, Any]
) -> None:
    """The head's weights with what it needs to be used again (kind, input width, encoder record)."""
    from common.atomic_io import atomic_open

    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "wb") as f:
        torch.save(
            {
                "format": FORMAT,
                "kind": head.kind,
                "cond_dim": head.cond_dim,
                "encoder": encoder,
                "meta": meta,
                "state_dict": head.state_dict(),
            },
            f,
        )


def load_head(path: Path) -> tuple[FineMaskHead, Dict[str, Any]]:
    """(head in eval mode, its file record); ValueError naming the file and the problem."""
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - any unreadable file is the same user error
        raise ValueError(f"mask_head {path}: cannot be read ({type(e).__name__})") from None
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        raise ValueError(f"mask_head {path}: not a {FORMAT} file")
    head = FineMaskHead(blob["kind"], blob["cond_dim"])
    head.load_state_dict(blob["state_dict"], strict=True)
    return head.eval(), blob
