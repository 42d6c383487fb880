
BoutputJ€;b¿@=