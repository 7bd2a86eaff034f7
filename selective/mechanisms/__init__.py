"""mechanisms"""
