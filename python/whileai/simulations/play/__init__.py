"""The engine behind ``simulate()``: knob resolution, the situation source, allocation, the loop."""
