"""Plot widgets (pyqtgraph): the live plots of any view, a flight's rates, the stability map's geometry.
They draw what they are given; no simulation here."""
