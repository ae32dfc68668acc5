"""Side-by-side benchmarks of actorgraph and LangGraph: `python -m benchmarks`."""
