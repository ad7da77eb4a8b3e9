"""Cleaning: decontamination, leakage, the within-ask hack scan, markers and trace flags."""
