"""Summarizers that call out (an OpenAI-compatible chat model); the default, extractive one is
pure and lives in `gateway.core.summary`."""

from gateway.summarizing.openai_chat import OpenAIChatSummarizer, SummarizerError

__all__ = ["OpenAIChatSummarizer", "SummarizerError"]
