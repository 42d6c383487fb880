Bgrad_updatesJ(}
ƒ]Ò¿7²ÊcÓ¿­çá8BÁ¿+ãq×0Ð¿TP§RMÓ¿