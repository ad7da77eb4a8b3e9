"""The agent under test as the stages read it: its tools, its policy, its spec folder."""
