;;; mdseek with Emacs eglot (Emacs 29+, or Emacs 28 with the eglot package)
;; Needs `mdseek` on PATH (or replace "mdseek" with the full path to your venv's mdseek).
;; M-x xref-find-apropos searches sections by meaning (workspace/symbol);
;; eldoc shows the hover preview of a link's target section; M-. follows links.

(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               '((markdown-mode gfm-mode markdown-ts-mode) . ("mdseek" "serve")))
  ;; Optional settings, sent as workspace/configuration under "mdseek".
  (setq-default eglot-workspace-configuration
                '(:mdseek (:searchLimit 20 :hoverRelated 5))))

(add-hook 'markdown-mode-hook #'eglot-ensure)
