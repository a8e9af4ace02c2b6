"""ipywidgets for notebooks: the create form and the index browser."""
