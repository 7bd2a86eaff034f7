"""conditional"""
