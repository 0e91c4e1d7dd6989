"""Messages of ex03_torch_cnn."""

EN = {
    "EX03_PARAM_SHAPES": "`{call}` gives shapes {got}; expected, in order, Conv2d(1, 16, 3) weight (16, 1, 3, 3) and bias, Conv2d(16, 32, 3), Linear(128, 64), Linear(64, num_classes) — create the layers in forward order, with padding=1 and two MaxPool2d(2) so 32 x 2 x 2 = 128 features reach the first Linear, and use the num_classes argument",
    "EX03_LAST_LINEAR": "could not find the last Linear layer: build the head from nn.Linear modules registered on the model (attributes or nn.Sequential), the last one being Linear(64, num_classes), and call it in forward",
    "EX03_NO_GRAPH": "the output of `forward` has no grad_fn: do not use torch.no_grad(), .detach() or .data inside forward",
    "EX03_NO_GRAD": "a parameter got no gradient: every layer must be used in forward, and registered as a submodule; do not .detach() the features",
    "EX03_EVAL_RANDOM": "in eval() mode two calls on the same input give different outputs: dropout is still on — use nn.Dropout(dropout) (or F.dropout(x, p, training=self.training)), which turns off in eval()",
    "EX03_NO_DROPOUT": "in train() mode two calls on the same input give the same output: dropout is not acting — add nn.Dropout(dropout) after the ReLU of Linear(128, 64)",
    "EX03_DROPOUT_ZERO": "with CNN(..., dropout=0.0) in train() mode the output differs from eval() mode: something random ignores the dropout argument — build nn.Dropout(dropout) from the argument, and nothing else should depend on the mode",
    "EX03_DROPOUT_PLACE": "in train() mode the input of the last Linear is not the eval() input with some units zeroed and the rest scaled by 1/(1-p): put the (only) dropout right before Linear(64, num_classes), after the ReLU — not on the convolutions, the flattened features or the logits",
    "EX03_DROPOUT_RATE": "with dropout={p}, a fraction {got} of the hidden units reaching the last Linear were zeroed in train() mode: use nn.Dropout(dropout) with the constructor's argument, right before Linear(64, num_classes)",
    "EX03_DROPOUT_SHARED": "in train() mode your dropout keeps or zeroes whole rows or whole columns of the features reaching the last Linear together (one mask drawn for the whole batch, or `nn.Dropout2d` on `(N, 64)` features, which it reads as channels): each unit of each example is kept or zeroed on its own — use nn.Dropout(dropout)",
    "EX03_DROPOUT_SCALE": "with dropout={p}, the units kept in train() mode are not scaled by 1/(1-p): use nn.Dropout(dropout), which rescales so that eval() needs no correction",
    "EX03_DEFAULT_CLASSES": "`CNN()` ends with parameters of shapes {got}: the default must be num_classes=10 (keep the signature `CNN(num_classes=10, dropout=0.3)`)",
    "EX03_DEFAULT_DROPOUT": "`CNN()` in train() mode zeroes a fraction {got} of the hidden units, expected about {p}: keep the default dropout=0.3 and pass it to nn.Dropout",
    "ex03.what.forward_batch": '`CNN.forward` on a batch of {n}',
    "EX03_KEYWORDS": "`{call}` raised {error}: keep the constructor's parameter names, num_classes and dropout, so that callers can pass them by keyword",
    "ex03.call.last_linear_input": 'the input of the last `nn.Linear`',
}

ES = {
    "EX03_PARAM_SHAPES": "`{call}` da las formas {got}; se esperaba, en orden, el peso de Conv2d(1, 16, 3) (16, 1, 3, 3) y su sesgo, Conv2d(16, 32, 3), Linear(128, 64), Linear(64, num_classes) — crea las capas en el orden del forward, con padding=1 y dos MaxPool2d(2) para que lleguen 32 x 2 x 2 = 128 características a la primera Linear, y usa el argumento num_classes",
    "EX03_LAST_LINEAR": "no se encontró la última capa Linear: construye la cabeza con módulos nn.Linear registrados en el modelo (atributos o nn.Sequential), la última Linear(64, num_classes), y llámala en forward",
    "EX03_NO_GRAPH": "la salida de `forward` no tiene grad_fn: no uses torch.no_grad(), .detach() ni .data dentro de forward",
    "EX03_NO_GRAD": "un parámetro no recibió gradiente: cada capa debe usarse en forward y estar registrada como submódulo; no hagas .detach() de las características",
    "EX03_EVAL_RANDOM": "en modo eval() dos llamadas con la misma entrada dan salidas distintas: el dropout sigue activo — usa nn.Dropout(dropout) (o F.dropout(x, p, training=self.training)), que se apaga en eval()",
    "EX03_NO_DROPOUT": "en modo train() dos llamadas con la misma entrada dan la misma salida: el dropout no actúa — añade nn.Dropout(dropout) tras la ReLU de Linear(128, 64)",
    "EX03_DROPOUT_ZERO": "con CNN(..., dropout=0.0) en modo train() la salida difiere de la del modo eval(): algo aleatorio ignora el argumento dropout — construye nn.Dropout(dropout) con el argumento, y que nada más dependa del modo",
    "EX03_DROPOUT_PLACE": "en modo train() la entrada de la última Linear no es la de eval() con algunas unidades a cero y el resto escaladas por 1/(1-p): pon el (único) dropout justo antes de Linear(64, num_classes), tras la ReLU — no en las convoluciones, ni en las características aplanadas, ni en los logits",
    "EX03_DROPOUT_RATE": "con dropout={p}, en modo train() se anuló una fracción {got} de las unidades ocultas que llegan a la última Linear: usa nn.Dropout(dropout) con el argumento del constructor, justo antes de Linear(64, num_classes)",
    "EX03_DROPOUT_SHARED": "en modo train() tu dropout conserva o anula juntas filas o columnas enteras de las características que llegan a la última Linear (una máscara para todo el lote, o `nn.Dropout2d` sobre características `(N, 64)`, que interpreta como canales): cada unidad de cada ejemplo se conserva o se anula por separado — usa nn.Dropout(dropout)",
    "EX03_DROPOUT_SCALE": "con dropout={p}, las unidades que se conservan en modo train() no se escalan por 1/(1-p): usa nn.Dropout(dropout), que reescala para que eval() no necesite corrección",
    "EX03_DEFAULT_CLASSES": "`CNN()` termina con parámetros de formas {got}: el valor por defecto debe ser num_classes=10 (conserva la firma `CNN(num_classes=10, dropout=0.3)`)",
    "EX03_DEFAULT_DROPOUT": "`CNN()` en modo train() anula una fracción {got} de las unidades ocultas, se esperaba alrededor de {p}: conserva el valor por defecto dropout=0.3 y pásalo a nn.Dropout",
    "ex03.what.forward_batch": '`CNN.forward` con un lote de {n}',
    "EX03_KEYWORDS": "`{call}` lanzó {error}: conserva los nombres de los parámetros del constructor, num_classes y dropout, para que se puedan pasar por nombre",
    "ex03.call.last_linear_input": 'la entrada de la última `nn.Linear`',
}
