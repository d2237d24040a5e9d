"""vLLM: a high-throughput and memory-efficient inference engine (demo subset)."""

from vllm.engine.llm_engine import LLMEngine
from vllm.sampling_params import SamplingParams
from vllm.version import __version__

__all__ = ["LLMEngine", "SamplingParams", "__version__"]
