"""Sampling parameters for text generation."""

from dataclasses import dataclass, field


@dataclass
class SamplingParams:
    """Sampling parameters for text generation."""

    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    min_p: float = 0.0
    max_tokens: int | None = 16
    logprobs: int | None = None
    stop: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.temperature < 0.0:
            raise ValueError(f"temperature must be non-negative, got {self.temperature}.")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}.")
        if self.top_k < 0:
            raise ValueError(f"top_k must be non-negative, got {self.top_k}.")

    def clone(self) -> "SamplingParams":
        return SamplingParams(**self.__dict__)
