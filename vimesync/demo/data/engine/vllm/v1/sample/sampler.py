"""A sampling layer that samples the next tokens from model outputs."""

import math


class Sampler:
    """Turns logits into next-token choices."""

    def __init__(self, vocab_size: int) -> None:
        self.vocab_size = vocab_size

    def apply_temperature(self, logits: list[float], temperature: float) -> list[float]:
        if temperature == 0.0:
            return logits
        return [x / temperature for x in logits]

    def apply_top_p(self, probs: list[float], top_p: float) -> list[float]:
        """Keep the smallest set of tokens whose cumulative probability exceeds top_p."""
        order = sorted(range(len(probs)), key=lambda i: probs[i], reverse=True)
        kept, total = set(), 0.0
        for i in order:
            kept.add(i)
            total += probs[i]
            if total >= top_p:
                break
        return [p if i in kept else 0.0 for i, p in enumerate(probs)]

    def softmax(self, logits: list[float]) -> list[float]:
        peak = max(logits)
        exps = [math.exp(x - peak) for x in logits]
        total = sum(exps)
        return [e / total for e in exps]

    def sample(self, logits: list[float], temperature: float, top_p: float) -> int:
        probs = self.softmax(self.apply_temperature(logits, temperature))
        probs = self.apply_top_p(probs, top_p)
        return max(range(len(probs)), key=lambda i: probs[i])
