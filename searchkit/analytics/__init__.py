"""Usage against limits: usage frames, forecasts and their backtest."""
