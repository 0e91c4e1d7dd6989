# VALID: nn.Sequential with ReLU(inplace) and Dropout(0.0) modules, extra keyword arguments, custom init via
#   apply(); unguarded module-level demo (make_moons, tqdm, a training loop with the built-in BCE, plt.show())
# My solution for ex01
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import matplotlib.pyplot as plt
from sklearn.datasets import make_moons
from tqdm import tqdm

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print("using", device)


class MLP(nn.Module):
    def __init__(self, input_dim, hidden_dims, output_dim, activation=nn.ReLU, dropout=0.0):
        super().__init__()
        layers = []
        in_dim = input_dim
        for h in hidden_dims:
            layers += [nn.Linear(in_dim, h), activation(), nn.Dropout(dropout)]
            in_dim = h
        layers.append(nn.Linear(in_dim, output_dim))
        self.layers = nn.Sequential(*layers)
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)

    def forward(self, x):
        if x.dim() == 1:
            x = x.unsqueeze(0)
        return self.layers(x)


X, y = make_moons(n_samples=500, noise=0.25, random_state=42)
X = torch.tensor(X, dtype=torch.float32, device=device)
y = torch.tensor(y, dtype=torch.float32, device=device).unsqueeze(1)
model = MLP(2, [32, 32], 1).to(device)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
losses = []
for epoch in tqdm(range(50)):
    opt.zero_grad()
    loss = F.binary_cross_entropy_with_logits(model(X), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
plt.plot(losses)
plt.title("loss")
plt.show()
