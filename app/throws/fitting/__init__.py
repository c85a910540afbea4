"""Fitting and predicting: free flights found from the torque residual, their edges, the least-squares fit of
the body's ratios and drag, its consensus, predictions of the next flip and the report."""
