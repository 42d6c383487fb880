Bgrad_outputJ0щ‹k?ѓBїР—dї"Ўд>wqIї!ѕI@uї—>ш)»?л Э?ь? 
?s+Ќ?