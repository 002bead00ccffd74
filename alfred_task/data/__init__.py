"""ALFRED's data formats and datasets: trajectory JSON, masks, vocabulary, preprocessing, features, IL batches.

The bottom stage: imports only `alfred_task.constants`, so every other stage can read data.
"""
