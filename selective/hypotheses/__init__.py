"""hypotheses"""
