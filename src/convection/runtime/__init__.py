"""Where jobs run. The embedded default is the asyncio executor."""
