BupdatesJ
ÿ€ùÿþÿ