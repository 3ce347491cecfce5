"""The narrated-contents detector of ``phantom_tool_result``: sentence patterns, answer shapes, events, the model."""
