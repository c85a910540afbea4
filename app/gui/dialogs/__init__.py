"""The dialogs: export, help and every file dialog.
Each opens over a window and returns what the user chose."""
