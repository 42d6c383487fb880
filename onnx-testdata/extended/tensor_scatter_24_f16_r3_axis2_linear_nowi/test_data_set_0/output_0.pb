
BpresentJ€A€@