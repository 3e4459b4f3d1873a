"""The Textual client: the App and its screens (widgets live in ``widgets/``)."""
