"""symbolic"""
