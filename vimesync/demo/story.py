"""The embedded example: a small Slime-like upstream, a Vime-like downstream, and what happened.

Plain data, read by ``vimesync.demo.build``. Each upstream step is one first-parent commit
(or a merged branch); file contents are short but real Python, so every figure the demo
prints (PR counts, changed paths, audit classes) is computed, not written down.
"""

from __future__ import annotations

from typing import Any

PPO_UTILS = '''"""Advantage and loss helpers."""

import math


def compute_grpo_advantages(rewards: list[float]) -> list[float]:
    """Group-relative advantages: reward minus the group mean, over the group std."""
    mean = sum(rewards) / len(rewards)
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / len(rewards)) or 1.0
    return [(r - mean) / std for r in rewards]
'''

PPO_UTILS_CENTERED = (
    PPO_UTILS
    + '''

def center_scores(scores: list[float], mask: list[bool]) -> list[float]:
    """Score centering: subtract the mean over the tokens the engine could sample."""
    kept = [s for s, m in zip(scores, mask) if m]
    mean = sum(kept) / len(kept) if kept else 0.0
    return [s - mean if m else 0.0 for s, m in zip(scores, mask)]
'''
)

ROLLOUT = '''"""Rollout against the inference engine."""

from {pkg}.utils.ppo_utils import compute_grpo_advantages


def generate_rollout(engine, prompts: list[str], n_samples: int) -> list[dict]:
    samples = []
    for prompt in prompts:
        outputs = [engine.generate(prompt) for _ in range(n_samples)]
        advantages = compute_grpo_advantages([o["reward"] for o in outputs])
        samples.extend({{**o, "advantage": a}} for o, a in zip(outputs, advantages))
    return samples
'''

ROLLOUT_FLUSH = (
    ROLLOUT
    + '''

def flush_pipeline(engine, every: int, step: int) -> bool:
    """PipelineRL: flush the engine cache every ``every`` steps so new weights take effect."""
    if every > 0 and step % every == 0:
        engine.flush_cache()
        return True
    return False
'''
)

TRAIN = '''"""Synchronous training entry point."""

from {pkg}.rollout.{rollout} import generate_rollout


def train(args, engine, trainer) -> None:
    for step in range(args.num_rollout):
        samples = generate_rollout(engine, args.prompts, args.n_samples_per_prompt)
        trainer.step(samples)
'''

TRAIN_ASYNC = '''"""Fully-async training entry point (kept apart from train.py)."""

from {pkg}.rollout.{rollout} import generate_rollout


def train_async(args, engine, trainer) -> None:
    pending = generate_rollout(engine, args.prompts, args.n_samples_per_prompt)
    for step in range(args.num_rollout):
        trainer.step(pending)
        pending = generate_rollout(engine, args.prompts, args.n_samples_per_prompt)
'''

MEMORY_UTILS = '''"""Memory helpers for offload and onload."""

import gc


def clear_memory() -> None:
    gc.collect()
'''

MEMORY_UTILS_STACK = (
    MEMORY_UTILS
    + '''

def reset_cuda_stack_size(torch) -> None:
    """Release an enlarged CUDA per-thread stack after model offload."""
    if getattr(torch.version, "cuda", None) is None or getattr(torch.version, "hip", None):
        return
    torch.cuda.set_stack_limit(1024)
'''
)

BUFFER = '''"""A rollout buffer shared by the trainer and the rollout workers."""


class RolloutBuffer:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.items: list[dict] = []

    def add(self, sample: dict) -> None:
        if len(self.items) >= self.capacity:
            self.items.pop(0)
        self.items.append(sample)

    def drain(self) -> list[dict]:
        items, self.items = self.items, []
        return items
'''

UPSTREAM_BASE_FILES: dict[str, Any] = {
    "README.md": "# slime\n\nAn LLM post-training framework for RL scaling.\n",
    "slime/__init__.py": "",
    "slime/utils/__init__.py": "",
    "slime/utils/ppo_utils.py": PPO_UTILS,
    "slime/utils/memory_utils.py": MEMORY_UTILS,
    "slime/rollout/__init__.py": "",
    "slime/rollout/sglang_rollout.py": ROLLOUT.format(pkg="slime"),
    "train.py": TRAIN.format(pkg="slime", rollout="sglang_rollout"),
    "train_async.py": TRAIN_ASYNC.format(pkg="slime", rollout="sglang_rollout"),
    "docs/en/index.md": "# slime documentation\n\n- Quick start\n- Advanced usage\n",
}

# Steps before the sync's BASE. The last of these is BASE.
UPSTREAM_BEFORE: list[dict[str, Any]] = [
    {"subject": "Initial commit", "files": UPSTREAM_BASE_FILES},
    {
        "subject": "Add GRPO advantage normalization (#2401)",
        "files": {"docs/en/advanced/grpo.md": "# GRPO\n\nAdvantages are normalized per group.\n"},
    },
]

# The sync range BASE..TIP, oldest first. kind: squash | merge | direct | rebase.
UPSTREAM_RANGE: list[dict[str, Any]] = [
    {
        "kind": "squash",
        "subject": "feat: score centering for GRPO advantages (#2410)",
        "files": {"slime/utils/ppo_utils.py": PPO_UTILS_CENTERED},
    },
    {
        "kind": "squash",
        "subject": "[NPU] Ascend: fused rotary embedding for NPU (#2424)",
        "files": {
            "slime/backends/npu/__init__.py": "",
            "slime/backends/npu/rope.py": '"""Fused rotary embedding for Ascend NPUs."""\n\n\ndef fused_rope(q, k, cos, sin):\n    return q * cos + k * sin\n',
            "docs/en/platforms/ascend.md": "# Ascend NPU\n\nRun slime on Ascend NPUs.\n",
        },
    },
    {
        "kind": "merge",
        "number": 2415,
        "branch": "alice/pipelinerl-flush",
        "subject": "PipelineRL periodic cache flush",
        "commits": [
            {
                "subject": "Add PipelineRL periodic cache flush",
                "files": {"slime/rollout/sglang_rollout.py": ROLLOUT_FLUSH.format(pkg="slime")},
            },
            {
                "fork_merge": 3,
                "branch": "bob/flush-tests",
                "subject": "Add flush tests",
                "files": {
                    "tests/test_flush.py": "from slime.rollout.sglang_rollout import flush_pipeline\n\n\ndef test_flush_every_two():\n    class E:\n        def flush_cache(self):\n            pass\n\n    assert flush_pipeline(E(), 2, 4)\n    assert not flush_pipeline(E(), 2, 3)\n"
                },
            },
        ],
    },
    {
        "kind": "squash",
        "subject": "feat(supa): Biren SUPA accelerator support (#2419)",
        "files": {
            "slime/backends/supa/__init__.py": "",
            "slime/backends/supa/device.py": '"""Device helpers for Biren SUPA accelerators."""\n\n\ndef is_supa(torch) -> bool:\n    return hasattr(torch, "supa") and torch.supa.is_available()\n',
            "slime/backends/npu/device.py": '"""Shared device probe, also used by the SUPA backend."""\n\n\ndef is_npu(torch) -> bool:\n    return hasattr(torch, "npu")\n',
        },
    },
    {
        "kind": "direct",
        "subject": "fix lint",
        "files": {
            "README.md": "# slime\n\nAn LLM post-training framework for RL scaling.\n\nSee docs/en/index.md.\n"
        },
    },
    {
        "kind": "squash",
        "subject": "Add CUDA stack reset after offload (#2420)",
        "files": {"slime/utils/memory_utils.py": MEMORY_UTILS_STACK},
    },
    {
        "kind": "squash",
        "subject": 'Revert "Add CUDA stack reset after offload (#2420)" (#2423)',
        "revert_of": -1,
        "files": {"slime/utils/memory_utils.py": MEMORY_UTILS},
    },
    {
        "kind": "rebase",
        "number": 2430,
        "commits": [
            {
                "subject": "refactor: split out the rollout buffer (#2430)",
                "files": {"slime/rollout/buffer.py": BUFFER},
            },
            {
                "subject": "test: cover the rollout buffer (#2430)",
                "files": {
                    "tests/test_buffer.py": "from slime.rollout.buffer import RolloutBuffer\n\n\ndef test_capacity():\n    b = RolloutBuffer(1)\n    b.add({'a': 1})\n    b.add({'a': 2})\n    assert b.drain() == [{'a': 2}]\n"
                },
            },
        ],
    },
    {
        "kind": "squash",
        "subject": "docs: Straw-backed distributed fully-async rollout (#2433)",
        "files": {
            "docs/en/advanced/straw.md": "# Straw\n\nStraw moves rollout data between nodes for fully-async training.\n"
        },
    },
    {
        "kind": "squash",
        "subject": "fix: fully-async rollout in train.py, drop train_async.py (#2434)",
        "files": {
            "train.py": TRAIN.format(pkg="slime", rollout="sglang_rollout")
            + "\n\ndef train_fully_async(args, engine, trainer) -> None:\n    train(args, engine, trainer)\n",
            "train_async.py": None,
        },
    },
]

# The downstream (Vime) before the sync: upstream BASE translated to vime/ on the vLLM engine,
# plus Vime's own overlays, plus one upstream PR already carried ahead of time.
# Local hooks only (pygrep: pre-commit's own, nothing installed or fetched), so that
# `vimesync sop record precommit` runs on the demo without a network.
DEMO_PRE_COMMIT = """\
repos:
- repo: local
  hooks:
  - id: no-conflict-markers
    name: no merge conflict markers
    entry: '^(<<<<<<<|=======|>>>>>>>)( |$)'
    language: pygrep
  - id: no-breakpoints
    name: no breakpoint() left in Python
    entry: '^\\s*breakpoint\\(\\)'
    language: pygrep
    types: [python]
"""

DOWNSTREAM_BASELINE_FILES: dict[str, Any] = {
    "README.md": "# Vime\n\nSlime's RL post-training, on vLLM.\n",
    ".pre-commit-config.yaml": DEMO_PRE_COMMIT,
    "vime/__init__.py": "",
    "vime/utils/__init__.py": "",
    "vime/utils/ppo_utils.py": PPO_UTILS,
    "vime/utils/memory_utils.py": MEMORY_UTILS,
    "vime/rollout/__init__.py": "",
    "vime/rollout/sglang_rollout.py": ROLLOUT.format(pkg="vime").replace("inference engine", "vLLM engine"),
    "vime/backends/vllm_engine.py": '"""Vime-native: drive vLLM in-process."""\n\n\ndef make_engine(model: str):\n    from vllm import LLMEngine\n\n    return LLMEngine(model)\n',
    "train.py": TRAIN.format(pkg="vime", rollout="sglang_rollout"),
    "train_async.py": TRAIN_ASYNC.format(pkg="vime", rollout="sglang_rollout"),
    "docs/en/index.md": "# slime documentation\n\n- Quick start\n- Advanced usage\n",
    "docs/en/advanced/grpo.md": "# GRPO\n\nAdvantages are normalized per group.\n",
}

# Commits the downstream made before the sync (after its baseline import), oldest first.
DOWNSTREAM_BEFORE_SYNC: list[dict[str, Any]] = [
    {
        "subject": "docs: Straw-backed distributed fully-async rollout",
        "body": "Carried ahead of the sync for the Straw rollout work.\n\nUpstream-PR: THUDM/slime#2433",
        "files": {
            "docs/en/advanced/straw.md": "# Straw\n\nStraw moves rollout data between nodes for fully-async training.\n"
        },
    },
]

# The sync: `vimesync carry` brings the applicable PRs over (path map and translations from
# vimesync.toml; #2420 and its revert #2423 as the no-op pair they are), then the maintainer adds
# the Vime-native overlay the synced code needs.
DOWNSTREAM_SYNC: dict[str, Any] = {
    "subject": "vllm_engine: propagate the weight version to vLLM",
    "body": "Vime-native overlay for the synced rollout: the engine learns the trainer's weight version.",
    "files": {
        "vime/backends/vllm_engine.py": '"""Vime-native: drive vLLM in-process."""\n\n\ndef make_engine(model: str, weight_version: int = 0):\n    from vllm import LLMEngine\n\n    engine = LLMEngine(model)\n    engine.update_weight_version(weight_version)\n    return engine\n',
    },
}
